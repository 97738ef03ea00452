// An export runs the product's redaction over what it writes: a secret an older build stored raw
// (before a rule that catches it existed) does not leave the store in an export file. The file
// is written by the CLI (a real process), as users make one; an import of it redacts as well.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';
import { CliBundle } from './cliFixture';
import { filesContaining } from './diskFixture';
import { removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const AWS = (tag: string): string => `AKIA${tag}QWERTYUIOPAS12`;

describe('export redacts what it writes', function () {
  this.timeout(180_000);
  const bundle = new CliBundle('test-export-redacts');
  const ENV = { CODE_MEMORY_EMBEDDER: 'none' };
  let dir: string;
  before(async () => {
    await bundle.build();
    dir = tempDir('export-redacts');
  });
  after(() => {
    removeDir(dir);
    bundle.remove();
  });

  it('a secret stored raw by an older build is redacted in the export file, and in a store the file is imported into', async () => {
    const store = path.join(dir, 'store');
    const scope = { project: 'p1', branch: 'main' };
    const e = await MemoryEngine.open({ storeUri: store, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const [o] = await e.observe([{ type: 'note', title: 'deploy note', narrative: 'deployed the app' }], scope);
      const m = await e.remember({ memory_type: 'note', title: 'Deploy key', text: 'the deploy key is kept in the vault' }, scope);
      // As an older build stored them: raw, in text, JSON and identifier fields.
      await e.store.table(TABLES.observations).update({ where: `id = ${o.id}`, values: { narrative: `deployed with ${AWS('NA')}`, facts: JSON.stringify([`key ${AWS('FA')}`]), memory_session_id: `sess-${AWS('SE')}` } });
      await e.store.table(TABLES.memories).update({ where: `id = ${m.id}`, values: { text: `the deploy key is ${AWS('TX')}` } });
      const raw: string[] = [];
      await e.store.rows(TABLES.observations, null).then((rows) => rows.forEach((r) => raw.push(JSON.stringify(r))));
      assert.ok(raw.some((r) => r.includes(AWS('NA'))), 'control: stored raw');
    } finally {
      await e.close();
    }
    const file = path.join(dir, 'export.jsonl');
    const exported = await bundle.run(['export', '--store', store, '--project', 'p1', '--out', file], { env: ENV });
    assert.equal(exported.code, 0, exported.stderr);
    const text = fs.readFileSync(file, 'utf8');
    assert.deepEqual(['NA', 'FA', 'SE', 'TX'].filter((t) => text.includes(AWS(t))), [], 'raw secrets in the export');
    assert.match(text, /deployed with \[REDACTED/);
    assert.match(text, /the deploy key is \[REDACTED/);
    // The rest of the record as stored.
    assert.match(text, /"title":"Deploy key"/);
    const target = path.join(dir, 'target');
    const imported = await bundle.run(['import', file, '--store', target, '--project', 'p1'], { env: ENV });
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /^Imported \d+ record\(s\)/);
    assert.deepEqual(['NA', 'FA', 'SE', 'TX'].filter((t) => filesContaining(target, AWS(t)).length > 0), []);
  });
});
