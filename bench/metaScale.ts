// What the meta table's lookups cost as forgets fill it: every forget by id of a commit
// observation leaves about three rows (its import tombstone `forgot_import:*` and the
// `forgot_record:*` identities an import of an older export is checked against), kept until the
// whole project is forgotten; every observe reads meta keys (forget stamps and journals).
//   npx tsx bench/metaScale.ts [--rows 30000,300000] [--calls 50] [--index on,off] [--json]
// The meta table is filled with rows of those key shapes (digests, as forget.ts writes them),
// most for other projects and 50 forgotten commits for the measured one, in appends of 10,000,
// then compacted as a forget's purge leaves it. Then: getMeta of a stored key and of a missing
// one, metaEntries of the measured project's tombstone prefix (50 rows) and of the big project's
// (a third of the rows), one setMeta of a new key, and one engine.observe of one observation.
// --index off drops the meta table's key index after the fill (a store as builds before it kept
// it, read by a scan), for a comparison under the same load. Prints p50 / p95 per call. Never
// asserts anything.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import type { Scope } from '../src/core/model/records';
import { recordForgetKeys } from '../src/core/store/forgetKeys';
import { TABLES } from '../src/core/store/schema';
import { percentile, round, runBench, sayer, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '30000,300000' },
    calls: { type: 'string', default: '50' },
    index: { type: 'string', default: 'on' },
    json: { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const say = sayer(values.json);
const scope: Scope = { project: 'bench/meta-small' };
const BIG = 'bench/meta-big';
const SMALL_FORGETS = 50;

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');
/** forget.ts tombstonePrefix / importTombstoneKey (not exported). */
const tombstonePrefix = (project: string): string => `forgot_import:${digest(project)}:`;
const tombstoneKey = (project: string, dedupeKey: string): string => `${tombstonePrefix(project)}${digest(`${project}\u0000${dedupeKey}`)}`;

/** The meta rows a forget by id of commit observation `i` of `project` leaves: one tombstone, the record's identities. */
function forgetRows(project: string, i: number, at: string): Array<{ key: string; value: string }> {
  const sha = digest(`${project}:${i}`).slice(0, 40);
  const epoch = Date.UTC(2025, 0, 1) + i * 60_000;
  const content = [digest(`content ${i}`), digest(`redacted ${i}`)];
  return [tombstoneKey(project, `commit:${sha}`), ...recordForgetKeys(project, 'observation', epoch, 1000 + i, content)].map((key) => ({ key, value: at }));
}

async function time(fn: (i: number) => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  await fn(-1);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  return { p50: round(percentile(times, 50), 1), p95: round(percentile(times, 95), 1) };
}

async function benchRows(target: number, index: string): Promise<Record<string, unknown>[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-meta-'));
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0, summariseOrphanSessions: false, logger: (m) => say(`  log: ${m}`) });
  try {
    const store = engine.repos.store;
    const at = String(Date.now());
    const fillStarted = performance.now();
    const small = Array.from({ length: SMALL_FORGETS }, (_, i) => forgetRows(scope.project, i, at)).flat();
    await store.add(TABLES.meta, small);
    let rows = small.length;
    const storedKeys = small.map((r) => r.key);
    // A third for the big project, the rest spread over 20 others.
    let batch: Array<{ key: string; value: string }> = [];
    for (let i = 0; rows < target; i++) {
      const project = i % 3 === 0 ? BIG : `bench/meta-other-${i % 20}`;
      const made = forgetRows(project, i, at);
      batch.push(...made);
      rows += made.length;
      if (i % 997 === 0) storedKeys.push(made[1].key);
      if (batch.length >= 10_000) {
        await store.add(TABLES.meta, batch);
        batch = [];
      }
    }
    await store.add(TABLES.meta, batch);
    const filled = performance.now();
    await store.compact(TABLES.meta, -1000);
    const count = await store.count(TABLES.meta);
    const meta = store.table(TABLES.meta);
    if (index === 'off') for (const i of await meta.listIndices()) await meta.dropIndex(i.name);
    say(`meta indexes: ${JSON.stringify((await meta.listIndices()).map((i) => `${i.columns.join(',')} ${i.indexType}`))}`);
    say(`${count} meta rows: filled in ${round((filled - fillStarted) / 1000, 1)} s, compacted in ${round((performance.now() - filled) / 1000, 1)} s`);
    const bigRows = (await store.metaEntries(tombstonePrefix(BIG))).length;
    const plan: Array<[string, (i: number) => Promise<unknown>]> = [
      ['getMeta (stored key)', (i) => store.getMeta(storedKeys[(i + 1) * 7 % storedKeys.length])],
      ['getMeta (missing key)', (i) => store.getMeta(`forgot_record:none:${i}`)],
      [`metaEntries (small project tombstones, ${SMALL_FORGETS})`, () => store.metaEntries(tombstonePrefix(scope.project))],
      [`metaEntries (big project tombstones, ${bigRows})`, () => store.metaEntries(tombstonePrefix(BIG))],
      ['setMeta (one new key)', (i) => store.setMeta({ [`bench_key:${i}`]: String(i) })],
      ['engine.observe (one observation)', (i) => engine.observe([{ type: 'note', title: `note ${i}`, narrative: `changed the parser, step ${i}` }], scope)],
    ];
    const out: Record<string, unknown>[] = [];
    for (const [name, fn] of plan) {
      const m = await time(fn);
      out.push({ meta_rows: count, key_index: index, call: name, p50_ms: m.p50, p95_ms: m.p95 });
      say(`  ${count} index ${index} ${name}: p50 ${m.p50} ms, p95 ${m.p95} ms`);
    }
    return out;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for (const n of values.rows.split(',').filter(Boolean).map(Number)) for (const index of values.index.split(',')) rows.push(...(await benchRows(n, index)));
  const report = { node: process.version, cpus: os.cpus().length, load_average_1m: round(os.loadavg()[0], 1), calls, rows };
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(`\n${table(rows)}\n`);
}

runBench(main);
