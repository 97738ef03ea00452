// retrieve_memory says of a fact what recall_context says of the same record: that its files
// changed since its commit (and ranks it a little lower), not a plain current fact.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import type { MemoryEngine } from '../../src/core/engine';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { git, makeRepo, tmp } from './captureHarness';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

describe('retrieve_memory and a commit whose files changed since', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let root: string;
  before(async () => {
    ({ engine, dir } = await openTestEngine());
    root = tmp('cm-facts-fresh-');
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('retrieve_memory: a commit whose file changed since is not stated as a plain fact (recall_context marks it)', async () => {
    const ws = path.join(root, 'shop2');
    makeRepo(ws, { 'src/rounding.ts': 'export const round = (n: number) => Math.round(n);\n' });
    const sha = git(ws, 'rev-parse', 'HEAD');
    const scope = { project: 'github.com/acme/facts-fresh' };
    await engine.observe([{ type: 'commit', title: 'Prices are rounded half up in rounding.ts', files_modified: ['src/rounding.ts'], commit_sha: sha, branch: 'main' }], scope);
    fs.writeFileSync(path.join(ws, 'src/rounding.ts'), 'export const round = (n: number) => Math.floor(n);\n');
    git(ws, 'commit', '-q', '-am', 'Round down');
    await engine.settled();
    const ctx = toolContext(engine, scope, { freshness: GitFreshness.forRepository(ws) });
    const pack = await recallContext(ctx, { query: 'how are prices rounded' });
    const r = await retrieveMemory(ctx, { prompt: 'How are prices rounded?' });
    const factLine = (r.content_text ?? '').split('\n').find((l) => /rounded half up/.test(l) && l.startsWith('- ['));
    const fact = r.retrieval?.facts.find((f) => /rounded half up/.test(f.statement));
    assert.match(fact?.statement ?? '', /^\[changed since [0-9a-f]{7}: src\/rounding\.ts\] /, JSON.stringify(r.retrieval?.facts));
    assert.deepEqual(
      { recall_context: /changed since/.test(pack.text), retrieve_memory_fact: /changed since/.test(factLine ?? '') },
      { recall_context: true, retrieve_memory_fact: true },
      `${pack.text}\n---\n${r.content_text}`,
    );
  });
});
