import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { TABLES } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';

const WRITER = path.join(__dirname, 'fixtures', 'storeWriter.ts');
const TSX = require.resolve('tsx/cli');

function runWriter(dir: string, count: number, tag: string, mode: string): Promise<{ tag: string; count: number; ms: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [TSX, WRITER, dir, String(count), tag, mode], { env: { ...process.env, LANCEDB_LOG: 'error' }, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`writer ${tag} failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop() as string));
    });
  });
}

describe('store: two processes writing one store', function () {
  this.timeout(600_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-concurrent-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('two writers storing the same keyed records at once (two imports of one repository): each stored once', async () => {
    const N = 600;
    await (await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 })).close();
    await Promise.all([runWriter(dir, N, 'a', 'dedupe'), runWriter(dir, N, 'b', 'dedupe')]);
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const rows = await engine.store.rows(TABLES.observations, null, { select: ['id', 'title'] });
      const titles = rows.map((r) => String(r.title));
      assert.equal(new Set(titles).size, N);
      assert.equal(titles.length, N, `${titles.length - new Set(titles).size} records stored twice`);
      const cells = await engine.store.rows(TABLES.cells, `source_kind = 'observation'`, { select: ['source_id'] });
      assert.equal(new Set(cells.map((c) => Number(c.source_id))).size, N);
      assert.equal(cells.length, N, 'one cell a record');
    } finally {
      await engine.close();
    }
  });

  it('5,000 observations each at once: every id exactly once, no record lost', async () => {
    const N = 5000;
    const results = await Promise.all([runWriter(dir, N, 'a', 'observe'), runWriter(dir, N, 'b', 'enqueue')]);
    const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
    try {
      const rows = await engine.store.rows(TABLES.observations, null, { select: ['id', 'title'] });
      if (rows.length !== 2 * N) {
        const count = new Map<string, number>();
        for (const r of rows) count.set(`${r.id} ${r.title}`, (count.get(`${r.id} ${r.title}`) ?? 0) + 1);
        const extra = [...count].filter(([, n]) => n > 1).slice(0, 10);
        assert.fail(`expected ${2 * N} observations, found ${rows.length}; repeated: ${JSON.stringify(extra)}`);
      }
      const ids = new Set(rows.map((r) => Number(r.id)));
      assert.equal(ids.size, 2 * N, 'duplicate ids');
      const titles = new Set(rows.map((r) => String(r.title)));
      for (const tag of ['a', 'b']) for (let i = 0; i < N; i++) assert.ok(titles.has(`writer ${tag} observation ${i}`), `lost ${tag} ${i}`);
      const cellIds = (await engine.store.rows(TABLES.cells, `layer = 'L0'`, { select: ['source_id'] })).map((r) => Number(r.source_id));
      assert.equal(cellIds.length, 2 * N);
      assert.deepEqual(new Set(cellIds), ids);
      // A third writer afterwards continues above every id handed out.
      const [later] = await engine.observe([{ type: 'note', title: 'after the race' }], { project: 'shared/project' });
      assert.ok(later.id > Math.max(...ids));
      process.stdout.write(`      concurrent writers: ${JSON.stringify(results)}\n`);
    } finally {
      await engine.close();
    }
  });

});
