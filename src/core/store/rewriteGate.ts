// Compaction rewrites a table's fragments and commits once at the end; an update or delete that
// commits meanwhile to a fragment being rewritten preempts it ("This Rewrite transaction was
// preempted by concurrent transaction Update"), and the whole rewrite is thrown away. Retrying
// does not help a process that keeps writing: its access times, statuses and vector write-backs
// preempted a 1,000,000-cell compaction six times in a row, gigabytes of work each. So, within a
// process, a table's rewrite holds that table's updates and deletes until it has committed;
// appends never conflict with it and are not held. Other processes are not held (they retry).

export class RewriteGate {
  private readonly tables = new Map<string, TableGate>();

  /** `committed` is told each mutation's result (LanceDB's names the version it committed). */
  constructor(private readonly committed: (table: string, result: unknown) => void = () => undefined) {}

  /** Runs an update, delete or merge of `table` once no rewrite of it is running. */
  async mutate<T>(table: string, work: () => Promise<T>): Promise<T> {
    const result = await this.gate(table).mutate(work);
    this.committed(table, result);
    return result;
  }

  /** Runs a rewrite of `table` (compaction) alone: later mutations wait for it, running ones finish first. */
  rewrite<T>(table: string, work: () => Promise<T>): Promise<T> {
    return this.gate(table).rewrite(work);
  }

  private gate(table: string): TableGate {
    let gate = this.tables.get(table);
    if (!gate) this.tables.set(table, (gate = new TableGate()));
    return gate;
  }
}

class TableGate {
  private mutating = 0;
  private drained: (() => void) | null = null;
  /** The rewrite running or waiting; mutations and rewrites asked for meanwhile wait for it. */
  private rewriting: Promise<unknown> | null = null;

  async mutate<T>(work: () => Promise<T>): Promise<T> {
    while (this.rewriting) await this.rewriting.catch(() => undefined);
    this.mutating++;
    try {
      return await work();
    } finally {
      if (--this.mutating === 0) this.drained?.();
    }
  }

  async rewrite<T>(work: () => Promise<T>): Promise<T> {
    while (this.rewriting) await this.rewriting.catch(() => undefined);
    const running = (async () => {
      if (this.mutating > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = null;
      return work();
    })();
    this.rewriting = running;
    try {
      return await running;
    } finally {
      this.rewriting = null;
    }
  }
}
