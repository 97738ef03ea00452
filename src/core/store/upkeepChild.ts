// The upkeep child process (see upkeepProcess.ts): runs one job on one table and answers.
// Bundled as dist/upkeepChild.js.

import * as lancedb from '@lancedb/lancedb';
import { createVectorIndex } from './annIndex';
import { retryConflicts } from './retry';
import type { UpkeepJob, UpkeepReply } from './upkeepProcess';

function answer(reply: UpkeepReply): void {
  process.send?.(reply, () => process.exit(reply.ok ? 0 : 1));
}

process.once('message', (job: UpkeepJob) => {
  void (async () => {
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
