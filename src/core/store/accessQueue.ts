// Access times written off the read path. get_observations records when an observation was
// last read, best effort by contract: two table updates (the record and its cell) on every
// call cost more than the read itself and add two versions to the store each time. Accesses
// are gathered per project and kind and written together once a minute; flush() writes them
// at once (the engine's flush, close and forget call it).
//
// Not sooner: an update moves the rows it touches out of their indexed fragment into a small
// one of its own, and every read by id then opens those until the lease holder compacts (after
// 16 of them). Written every second, a server answering get_observations without pause went
// from 3-4 ms a call to 10 within 20 seconds and stayed there (100,000 cells, stdio); with no
// access writes it stayed at 3-3.9. Nothing ranks by access times, so a minute late costs only
// their freshness, and a process killed outright loses at most a minute of them.

import type { SourceKind } from '../model/records';

/** How long accesses gather before they are written (see above). */
export const ACCESS_WRITE_DELAY_MS = 60_000;

export type AccessWriter = (project: string, kind: SourceKind, ids: number[], at: number) => Promise<void>;

export class AccessQueue {
  private pending = new Map<string, { project: string; kind: SourceKind; ids: Set<number>; at: number }>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: AccessWriter,
    private readonly log: (message: string) => void,
    private readonly delayMs = ACCESS_WRITE_DELAY_MS,
  ) {}

  /** Notes an access now; written with the next batch. */
  push(project: string, kind: SourceKind, ids: number[]): void {
    const key = `${kind}\u0000${project}`;
    const entry = this.pending.get(key) ?? { project, kind, ids: new Set<number>(), at: 0 };
    for (const id of ids) entry.ids.add(id);
    entry.at = Date.now();
    this.pending.set(key, entry);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.delayMs);
      // Pending access times must not keep a CLI process alive; close() flushes them.
      this.timer.unref();
    }
  }

  /** Writes every access noted so far; resolves when they are stored (failures are logged). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.writing = this.writing.then(async () => {
      for (const e of batch) {
        try {
          const ids = [...e.ids];
          for (let i = 0; i < ids.length; i += 500) await this.write(e.project, e.kind, ids.slice(i, i + 500), e.at);
        } catch (error) {
          this.log(`access times of ${e.ids.size} ${e.kind}(s) in ${e.project} not recorded: ${String((error as Error).message ?? error)}`);
        }
      }
    });
    return this.writing;
  }
}
