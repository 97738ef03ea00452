// What one topic written to on every turn costs: `remember` with the same topic_key again and
// again (an agent keeping "the task's status"), and get_observations of the latest memory, whose
// topic_trace carries the topic's history. Prints, per 100 calls, remember's mean latency, the
// details' read time and size.
//   npx tsx bench/topicTrace.ts [--calls 300] [--maintenance-ms 60000]
// A real store in a temp folder with the hashed embedder; maintenance (compaction) every
// --maintenance-ms as the product runs it (0: none). Never asserts anything.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HashedEmbedder } from '../src/core/embed/hashed';
import { MemoryEngine } from '../src/core/engine';
import { getObservations } from '../src/core/tools/getObservations';
import { remember } from '../src/core/tools/write';

process.env.LANCEDB_LOG ??= 'error';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '300' }, 'maintenance-ms': { type: 'string', default: '60000' } } });

async function main(): Promise<void> {
  const calls = Number(values.calls);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cm-bench-topic-'));
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: Number(values['maintenance-ms']) });
  const ctx = { engine, scope: { project: 'bench/topic' } };
  try {
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      const m = await remember(ctx, { memory_type: 'note', title: `Task status ${i}`, text: `Status of the task at step ${i}: ${'working on the parser and the lexer '.repeat(8)}`, topic_key: 'task-status' });
      times.push(performance.now() - t0);
      if ((i + 1) % 100 !== 0 && i + 1 !== calls) continue;
      const g0 = performance.now();
      const details = await getObservations(ctx, { ids: [m.id] });
      const read = performance.now() - g0;
      const last = times.slice(-100);
      const trace = (details.details[0] as { topic_trace: unknown[] | null }).topic_trace ?? [];
      console.log(`${i + 1} memories: remember mean of the last ${last.length} ${Math.round(last.reduce((a, b) => a + b, 0) / last.length)} ms; get_observations ${Math.round(read)} ms, ${trace.length} segments, ${JSON.stringify(details).length} chars`);
    }
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
