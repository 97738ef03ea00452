// Retrieval latency over a personal store vs a team store on object storage (the local S3 API
// of test/unit/fixtures, s3rver made safe), cold and warm. The same N synthetic memories are
// put in a local store and, as shared items, in a team store; each engine.search (what
// recall_context and retrieve_memory run) is timed in process.
//   npx tsx bench/teamRecall.ts [--n 2000] [--queries 30] [--json]
// Rows:
// - local cold: the first search after opening the personal store; local warm: the searches after.
// - team cold: searches over the S3 API itself, as a first run does before its local copy exists
//   (the copy downloads in the background; no query waits for it);
// - team open + cache fill: a fresh process opening the engine until the local copy is filled;
// - team warm: searches once the local copy is there (the personal store is empty), so only
//   the team items answer.
// Prints a table and a JSON document (only JSON with --json). Never asserts anything.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import { teamNodeId, teamRow } from '../src/core/team/shareRows';
import { TeamMemory } from '../src/core/team/teamMemory';
import { TeamTable } from '../src/core/team/teamTable';
import { hybridSearch } from '../src/core/retrieve/hybrid';
import { objectStorageOptions } from '../src/core/store/objectStorage';
import { startS3Server } from '../test/unit/fixtures/s3Server';
import { percentile, round, sayer, syntheticCorpus, table } from './synthetic';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '2000' },
    queries: { type: 'string', default: '30' },
    json: { type: 'boolean', default: false },
  },
});
const n = Number(values.n);
const queryCount = Number(values.queries);
const say = sayer(values.json);
const PROJECT = 'github.com/acme/bench';
const AUTHOR = 'Bench <bench@example.com>';

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const out = await fn();
  return [performance.now() - t, out];
}

function stats(label: string, ms: number[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { run: label, queries: ms.length, 'first (cold) ms': round(ms[0] ?? NaN, 1), 'p50 ms': round(percentile(ms, 50), 1), 'p95 ms': round(percentile(ms, 95), 1), ...extra };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-team-'));
  const s3 = await startS3Server({ directory: path.join(dir, 's3') });
  Object.assign(process.env, s3.env);
  const corpus = syntheticCorpus(n, queryCount);
  const embedder = new HashedEmbedder();
  const rows: Array<Record<string, unknown>> = [];
  try {
    // Personal store with N memories.
    say(`writing ${n} memories to a local store...`);
    const localDir = path.join(dir, 'local');
    let engine = await MemoryEngine.open({ storeUri: localDir, embedder, maintenanceIntervalMs: 0 });
    for (let i = 0; i < n; i++) await engine.remember({ title: corpus.titles[i], text: corpus.texts[i], memory_type: 'decision' }, { project: PROJECT });
    await engine.waitForVectors();
    await engine.optimize(0);
    await engine.close();

    // The same N as shared items in the team store, with their vectors.
    say(`sharing ${n} items to s3://team/bench through ${s3.endpoint}...`);
    const writer = await TeamMemory.open({ uri: 's3://team/bench', stateDir: path.join(dir, 'writer'), dimension: embedder.dimension, refreshMs: 0 });
    const vectors = await embedder.embed(corpus.texts.map((t, i) => `${corpus.titles[i]}\n${t}`));
    for (let i = 0; i < n; i += 500) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 500); j++) {
        const nodeId = teamNodeId(PROJECT, AUTHOR, 'memory', j + 1);
        const cell = { node_id: nodeId, layer: 'L2' as const, source_kind: 'memory' as const, source_id: j + 1, project: PROJECT, branch: null, type: 'decision', title: corpus.titles[j], text: `${corpus.titles[j]}\n${corpus.texts[j]}`, files: null, commit_sha: null, session_id: null, created_at_epoch: Date.now(), last_accessed_epoch: null, access_count: 0, status: 'active' };
        batch.push(teamRow({ cell, vector: vectors[j], embedModel: embedder.name }, { node_id: nodeId, project: PROJECT, origin: `memory/${j + 1}`, layer: 'L2', type: 'decision', title: cell.title, text: cell.text, files: [], branch: null, shared_by: AUTHOR }, Date.now()));
      }
      await writer.share(batch);
    }
    await writer.sync();
    await writer.close();

    // Local, cold then warm.
    engine = await MemoryEngine.open({ storeUri: localDir, embedder, maintenanceIntervalMs: 0 });
    const local: number[] = [];
    for (const q of corpus.queries) local.push((await timed(() => engine.search(q, { scope: { project: PROJECT }, limit: 10 })))[0]);
    await engine.close();
    rows.push(stats('local store', local));

    // The team store read directly over the S3 API (the path of a first run, before the local copy exists).
    const remoteTable = await TeamTable.open('s3://team/bench', objectStorageOptions({ scheme: 's3', bucket: 'team', prefix: 'bench' }, process.env), embedder.dimension);
    const where = `project = '${PROJECT}' AND status = 'active'`;
    const remote: number[] = [];
    for (const q of corpus.queries) remote.push((await timed(() => hybridSearch({ cells: remoteTable.table, project: PROJECT, segments: null, embedder }, q, where, 10)))[0]);
    remoteTable.close();

    // The product path in a fresh process: open, connect, download the copy, then search it.
    const stateDir = path.join(dir, 'reader');
    const [open, opened] = await timed(() => MemoryEngine.open({ storeUri: path.join(dir, 'empty'), embedder, maintenanceIntervalMs: 0, team: { uri: 's3://team/bench', author: 'Reader <r@example.com>', stateDir, refreshMs: 0 } }));
    engine = opened;
    const [fill] = await timed(async () => {
      for (;;) {
        const status = await engine.teamStatus();
        if (status?.synced_at_epoch) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const warm: number[] = [];
    for (const q of corpus.queries) warm.push((await timed(() => engine.search(q, { scope: { project: PROJECT }, limit: 10 })))[0]);
    const teamHits = (await engine.search(corpus.queries[0], { scope: { project: PROJECT }, limit: 10 })).filter((h) => h.origin?.store === 'team').length;
    await engine.close();
    rows.push(stats('team store, cold (over S3, no local copy)', remote));
    rows.push({ run: 'team store, open + cache fill (download)', queries: 0, 'first (cold) ms': round(open + fill, 1), 'p50 ms': '', 'p95 ms': '' });
    rows.push(stats('team store, warm (local copy)', warm));
    const doc = { n, queries: queryCount, embedder: embedder.name, team_hits_first_query: teamHits, rows };
    if (values.json) console.log(JSON.stringify(doc, null, 2));
    else {
      console.log(`\n${n} memories, ${queryCount} queries, embedder ${embedder.name}, k=10, local S3 API (s3rver) on 127.0.0.1\n`);
      console.log(table(rows));
      console.log(JSON.stringify(doc));
    }
  } finally {
    await s3.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
