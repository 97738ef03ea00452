// The heavy upkeep of a large table in a process of its own: compaction (LanceDB's optimize()),
// the vector index build, and a project's full text indexed again (a merge of its small
// segments: seconds of JavaScript that would hold up every answer of the server that holds the
// maintenance lease). At 1,000,000 cells optimize() holds about 0.9 GB while it runs and
// the IVF_PQ build about 0.7 GB, and the process that ran them kept that memory (the allocator
// does not give it back): the maintenance-lease holder, a server answering queries, stayed near
// 1 GB instead of 470 MB. A child process takes the peak and gives it back when it exits.
// LanceDB's JavaScript API has no options (batch size, threads) that would bound it in place.
// Both commit atomically: a child that dies leaves the table as it was.

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { storeChildEnv } from '../processEnv';
import type { AnnIndexKind } from './annIndex';

/** What a child is asked to do to one table. */
export type UpkeepJob = {
  /** What lancedb.connect is given (a local path or an object-store URI) and its storage options. */
  connect: { uri: string; storageOptions?: Record<string, string> };
  table: string;
} & (
  | {
      op: 'optimize';
      /** Versions older than this are pruned (negative: every version but the latest). */
      olderThanMs: number;
      /** Tries when a commit conflicts. */
      attempts: number;
    }
  | { op: 'vector-index'; column: string; kind: AnnIndexKind; rows: number }
  /** These projects' full text indexed again (lexiconIndexer.ts), in a store of this dimension. */
  | { op: 'full-text'; projects: string[]; minDelta: number; dimension: number }
);

/** Fragments of the table before and after the job; for full-text, how many projects got new segments. */
export type UpkeepReply = { ok: true; fragmentsBefore: number; fragmentsAfter: number; written?: number } | { ok: false; error: string };

/** The child processes running, so that a store closing stops them (no process outlives it). */
export class UpkeepProcess {
  private readonly running = new Set<ChildProcess>();
  /** The child's script; null when it is missing (the work is then done in place). */
  readonly entry: string | null;

  constructor(entry: string | null = defaultEntry()) {
    this.entry = entry && existsSync(entry) ? entry : null;
  }

  /** Runs the job in a child process; rejects with the child's error, or how it ended. */
  run(job: UpkeepJob): Promise<Extract<UpkeepReply, { ok: true }>> {
    if (!this.entry) return Promise.reject(new Error('the upkeep process script is missing (upkeepChild.js next to the bundle)'));
    const tsx = this.entry.endsWith('.ts');
    const child = fork(this.entry, [], {
      // Running from source (tests, benches under tsx): the child loads the TypeScript entry
      // through tsx. A computed name keeps bundlers from trying to include the dev-only loader.
      execArgv: tsx ? ['--require', require.resolve(['tsx', 'cjs'].join('/'))] : [],
      // The extension host's executable is Electron's: the environment runs the child as Node.
      env: storeChildEnv(),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.running.add(child);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-2000);
    });
    return new Promise((resolve, reject) => {
      let reply: UpkeepReply | null = null;
      child.on('message', (m: UpkeepReply) => {
        reply = m;
      });
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        this.running.delete(child);
        if (reply?.ok) resolve(reply);
        else if (reply) reject(new Error(reply.error));
        else reject(new Error(`the upkeep process ended (${signal ?? `exit code ${code}`}) before it answered${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
      });
      child.send(job);
    });
  }

  /** Stops every child still running; their tables stay as they were. */
  stop(): void {
    for (const child of this.running) child.kill('SIGKILL');
    this.running.clear();
  }
}

function defaultEntry(): string | null {
  const candidates = [
    path.join(__dirname, 'upkeepChild.js'), // bundled: dist/cliCommands.js, dist/engineWorker.js
    path.join(__dirname, 'upkeepChild.ts'), // source under tsx
  ];
  return candidates.find((p) => existsSync(p)) ?? null;
}
