// retrieve_memory says of a fact what recall_context says of the same record: that its files
// changed since its commit, or that a file it names is gone, not a plain current fact.
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

  it('a decision about a file deleted and committed since: recall_context and retrieve_memory say the file is gone', async () => {
    const ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/legacyDiscount.ts': 'export const discount = 0.1;\n', 'src/price.ts': 'export const p = 1;\n' });
    const scope = { project: 'github.com/acme/facts-gone' };
    const m = await engine.remember({ memory_type: 'decision', title: 'Discounts', text: 'We compute discounts in the legacy discount module.', files: ['src/legacyDiscount.ts'] }, scope);
    const kept = await engine.remember({ memory_type: 'decision', title: 'Prices', text: 'We compute prices in the price module.', files: ['src/price.ts'] }, scope);
    git(ws, 'rm', '-q', 'src/legacyDiscount.ts');
    git(ws, 'commit', '-q', '-m', 'Remove the legacy discount module');
    await engine.settled();
    const ctx = toolContext(engine, scope, { freshness: GitFreshness.forRepository(ws) });
    const pack = await recallContext(ctx, { query: 'where are discounts and prices computed' });
    const item = pack.items.find((i) => i.source_kind === 'memory' && i.source_id === m.id);
    assert.equal(item?.freshness, 'changed', pack.text);
    assert.match(pack.text, /\[no longer in the working tree: src\/legacyDiscount\.ts\]/);
    assert.equal(pack.items.find((i) => i.source_kind === 'memory' && i.source_id === kept.id)?.freshness ?? null, null, 'a memory whose file is there says nothing');
    const r = await retrieveMemory(ctx, { prompt: 'Where do we compute discounts?' });
    const fact = r.retrieval?.facts.find((f) => /legacy discount/.test(f.statement));
    assert.match(fact?.statement ?? '', /^\[no longer in the working tree: src\/legacyDiscount\.ts\] /, JSON.stringify(r.retrieval?.facts));
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
