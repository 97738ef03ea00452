// A files filter is matched by regular expressions of its paths (filters.sqlContainsAny), and a
// regular expression has a compiled size limit: the largest filters a caller may send (the tools
// take 100 paths of up to 512 characters, any script; the engine's API more) still find what they
// name, rather than failing with "Regular expression did not compile: CompiledTooBig".
// Real engine in a temp folder.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { openTestEngine, removeDir } from './mcpFixture';

const SCOPE: Scope = { project: 'github.com/acme/app' };

describe('files filter: the longest filters still match', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const wanted = 'src/x.ts';
  before(async () => {
    ({ engine, dir } = await openTestEngine());
    await engine.remember({ title: 'wombat decision', text: 'wombat notes', memory_type: 'decision', files: [wanted] }, SCOPE);
    await engine.remember({ title: 'wombat other', text: 'wombat notes elsewhere', memory_type: 'decision', files: ['src/y.ts'] }, SCOPE);
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  const titles = async (files: string[]): Promise<string[]> => (await engine.search('wombat', { scope: SCOPE, filter: { files }, limit: 10 })).map((h) => String((h.cell as { title?: string }).title));

  it('100 paths of 512 characters outside the Basic Multilingual Plane (the tools\' largest filter)', async () => {
    const files = Array.from({ length: 99 }, (_, i) => `${String(i).padStart(2, '0')}/${'𝒳'.repeat(509)}`).concat([wanted]);
    assert.deepEqual(await titles(files), ['wombat decision']);
  });

  it('1,000 paths of 240 characters through the engine API', async () => {
    const files = Array.from({ length: 1000 }, (_, i) => `src/${'verylongdirectoryname/'.repeat(10)}file${i}.ts`).concat([wanted]);
    assert.deepEqual(await titles(files), ['wombat decision']);
  });

  it('many paths full of regex metacharacters match only themselves', async () => {
    const files = Array.from({ length: 300 }, (_, i) => `${i}/${'(.*)+[^$]|{}?\\'.repeat(30)}`).concat(['src/x.t.']);
    assert.deepEqual(await titles(files), []);
    assert.deepEqual(await titles([...files, wanted]), ['wombat decision']);
  });
});
