// A git import of the commits real repositories hold beside the ordinary ones: a commit that adds
// a whole vendored or generated tree (10,000 files), and a commit message of a long text in a
// script written without spaces. Each is imported (no commit stops every later import at it), its
// file list stays within what an export of the store is imported back with, and the commit says
// how many files it changed.

import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { MemoryEngine } from '../../src/core/engine';
import { MAX_RECORD_PATHS } from '../../src/core/model/limits';
import { prepareIndexText } from '../../src/core/retrieve/textPrep';
import { git, makeRepo } from './gitImportFixture';

const T0 = 1_700_000_000;

describe('git import of a very large commit', () => {
  let repo: string;
  let storeDir: string;
  let work: string;
  let engine: MemoryEngine;
  const scope = { project: 'large' };

  beforeEach(async () => {
    ({ repo } = makeRepo([{ subject: 'Initial commit', files: { 'README.md': '# Widget\n' }, time: T0 }]));
    storeDir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-large-store-'));
    work = mkdtempSync(path.join(os.tmpdir(), 'code-memory-large-'));
    engine = await MemoryEngine.open({ storeUri: storeDir, embedder: 'none' });
  });

  afterEach(async () => {
    await engine.close();
    for (const d of [storeDir, repo, work]) rmSync(d, { recursive: true, force: true });
  });

  it('imports a commit of 10,000 files with long paths, listing the first of them, and its export imports back', async () => {
    const folder = path.join(repo, 'src', 'very_long_folder_name_for_generated_code', 'another_long_folder_name_for_generated_code');
    mkdirSync(folder, { recursive: true });
    for (let i = 0; i < 10_000; i++) writeFileSync(path.join(folder, `generated_module_file_number_${String(i).padStart(6, '0')}_with_a_long_descriptive_suffix.ts`), `export const v${i} = ${i};\n`);
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'Vendor the generated client'], { GIT_AUTHOR_DATE: `${T0 + 60} +0000`, GIT_COMMITTER_DATE: `${T0 + 60} +0000` });

    const result = await importGitHistory(engine, repo, { scope, documents: false }).catch((e: Error) => e);
    assert.ok(!(result instanceof Error), `the import failed: ${String(result)}`);
    assert.equal(result.imported, 2);
    const big = (await engine.listObservations(scope, { limit: 10 })).find((o) => o.title === 'Vendor the generated client');
    assert.ok(big, 'the large commit is stored');
    const files = JSON.parse(big.files_modified ?? '[]') as string[];
    assert.equal(files.length, MAX_RECORD_PATHS);
    assert.ok(files[0].endsWith('generated_module_file_number_000000_with_a_long_descriptive_suffix.ts'));
    assert.deepEqual(JSON.parse(big.facts ?? '[]'), [`10,000 files changed; the first ${MAX_RECORD_PATHS} are listed`]);

    // What the store holds is what an import of its export accepts.
    const lines: string[] = [];
    await engine.exportJsonl((line) => lines.push(line), scope);
    const other = await MemoryEngine.open({ storeUri: path.join(work, 'other'), embedder: 'none' });
    try {
      const back = await other
        .importJsonl(async function* () {
          yield* lines;
        })
        .catch((e: Error) => e);
      assert.ok(!(back instanceof Error), `the export was refused: ${String(back)}`);
      assert.equal((await other.listObservations(scope, { limit: 10 })).filter((o) => o.type === 'commit').length, 2);
    } finally {
      await other.close();
    }
  });

  it('imports a commit whose message is 300,000 characters of Chinese', async () => {
    const message = `修正${'漢字'.repeat(150_000)}`;
    const messageFile = path.join(work, 'message.txt');
    writeFileSync(messageFile, message);
    writeFileSync(path.join(repo, 'a.txt'), 'a\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-F', messageFile], { GIT_AUTHOR_DATE: `${T0 + 60} +0000`, GIT_COMMITTER_DATE: `${T0 + 60} +0000` });

    const result = await importGitHistory(engine, repo, { scope, documents: false }).catch((e: Error) => e);
    assert.ok(!(result instanceof Error), `the import failed: ${String(result)}`);
    assert.equal(result.imported, 2);
  });

  it('prepares the search text of any long text, path list or diff text without overflowing the stack', () => {
    const long = (f: () => string): string => {
      try {
        return f();
      } catch (e) {
        return `failed: ${String(e)}`;
      }
    };
    assert.doesNotMatch(long(() => prepareIndexText({ title: 'cjk', text: '漢字'.repeat(150_000) })), /^failed/);
    assert.doesNotMatch(long(() => prepareIndexText({ title: 'extra', text: '', extra: 'word '.repeat(300_000) })), /^failed/);
    const paths = Array.from({ length: 20_000 }, (_, i) => `src/generated/module_${i}/generated_file_name_${i}.ts`);
    assert.doesNotMatch(long(() => prepareIndexText({ title: 'paths', text: '', files: paths })), /^failed/);
  });
});
