// The upkeep child process (see upkeepProcess.ts): runs one job on one table and answers.
// Bundled as dist/upkeepChild.js.

import * as lancedb from '@lancedb/lancedb';
import { createVectorIndex } from './annIndex';
import { LexicalSegments } from './lexicalSegments';
import { indexProjectLexicon } from './lexiconIndexer';
import { retryConflicts } from './retry';
import { TABLES } from './schema';
import { Store } from './store';
import type { UpkeepJob, UpkeepReply } from './upkeepProcess';

function answer(reply: UpkeepReply): void {
  process.send?.(reply, () => process.exit(reply.ok ? 0 : 1));
}

async function writeFullText(job: Extract<UpkeepJob, { op: 'full-text' }>): Promise<number> {
  // The store as any process opens it, its own upkeep in place (this is the child).
  const store = await Store.open({ uri: job.connect.uri, storageOptions: job.connect.storageOptions, dimension: job.dimension, upkeepInChildFrom: Number.POSITIVE_INFINITY });
  try {
    const segments = new LexicalSegments(store);
    let written = 0;
    for (const project of job.projects) {
      if (await indexProjectLexicon(store.table(TABLES.cells), segments, project, { minDelta: job.minDelta })) written++;
    }
    return written;
  } finally {
    store.close();
  }
}

process.once('message', (job: UpkeepJob) => {
  void (async () => {
    if (job.op === 'full-text') {
      answer({ ok: true, fragmentsBefore: 0, fragmentsAfter: 0, written: await writeFullText(job) });
      return;
    }
    const db = await lancedb.connect(job.connect.uri, { storageOptions: job.connect.storageOptions, readConsistencyInterval: 0 });
    const table = await db.openTable(job.table);
    const fragmentsBefore = (await table.stats()).fragmentStats.numFragments;
    if (job.op === 'optimize') {
      await retryConflicts(() => table.optimize({ cleanupOlderThan: new Date(Date.now() - job.olderThanMs) }), job.attempts);
    } else {
      await createVectorIndex(table, job.column, job.kind, job.rows);
    }
    const fragmentsAfter = (await table.stats()).fragmentStats.numFragments;
    answer({ ok: true, fragmentsBefore, fragmentsAfter });
  })().catch((e: unknown) => answer({ ok: false, error: String((e as Error)?.message ?? e) }));
});
