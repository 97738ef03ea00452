// The compaction child process (see compactor.ts): runs one table's optimize() and answers.
// Bundled as dist/compactorChild.js.

import * as lancedb from '@lancedb/lancedb';
import type { CompactJob, CompactReply } from './compactor';
import { retryConflicts } from './retry';

function answer(reply: CompactReply): void {
  process.send?.(reply, () => process.exit(reply.ok ? 0 : 1));
}

process.once('message', (job: CompactJob) => {
  void (async () => {
    const db = await lancedb.connect(job.connect.uri, { storageOptions: job.connect.storageOptions, readConsistencyInterval: 0 });
    const table = await db.openTable(job.table);
    const fragmentsBefore = (await table.stats()).fragmentStats.numFragments;
    await retryConflicts(() => table.optimize({ cleanupOlderThan: new Date(Date.now() - job.olderThanMs) }), job.attempts);
    const fragmentsAfter = (await table.stats()).fragmentStats.numFragments;
    answer({ ok: true, fragmentsBefore, fragmentsAfter });
  })().catch((e: unknown) => answer({ ok: false, error: String((e as Error)?.message ?? e) }));
});
