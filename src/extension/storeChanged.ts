import type { Container } from './container';

type Shows = Pick<Container, 'sessionsView' | 'memoriesView' | 'requestLogView' | 'codeLens' | 'statusBar' | 'details' | 'recall'>;

/**
 * After a command wrote to or forgot from the store: everything in the window that shows what
 * the store holds looks again, so nothing keeps counting or showing a record that went. The
 * command registrar calls it after every command that changes the store, and the chat tools
 * after a remember; the views refresh on their own timers, the panels and the count at once.
 * What another process changes (the CLI, another window) comes here through StoreWatcher.
 */
export async function storeChanged(c: Shows): Promise<void> {
  c.sessionsView.refresh();
  c.memoriesView.refresh();
  c.requestLogView.refresh();
  c.codeLens.refresh();
  await Promise.all([c.statusBar.refreshCount(), c.details.refresh(), c.recall.refresh()]);
}

/** How often a window looks whether another process changed the store (while it is watching). */
export const STORE_WATCH_MS = 3000;
/**
 * A forget or an import of another process is several commits in a row (its journal, the rows,
 * the journal's end): once a look finds a change, the window looks again this often until a look
 * finds none (for up to STORE_SETTLE_MAX_MS), then brings itself up to date once.
 */
export const STORE_SETTLE_MS = 500;
export const STORE_SETTLE_MAX_MS = 5000;

/**
 * Brings the window up to date with what another process (the CLI, another window) writes to or
 * forgets from the store: every few seconds, while `watching()` (the window is focused or shows a
 * view of the store) and its engine is open (never opening it), the engine says whether a table
 * the window shows has a new version it did not write itself (a listing of the tables' versions,
 * see StoreChanges); if so, storeChanged() runs once. The window's own writes refresh it already.
 */
export class StoreWatcher {
  private readonly timer: NodeJS.Timeout;
  private looking = false;
  private disposed = false;

  constructor(
    private readonly c: Shows & Pick<Container, 'engines'>,
    private readonly watching: () => boolean,
    intervalMs = STORE_WATCH_MS,
    private readonly settleMs = STORE_SETTLE_MS,
  ) {
    this.timer = setInterval(() => void this.look(), intervalMs);
    this.timer.unref?.();
  }

  /** One look; true when the store changed elsewhere and the window was brought up to date. */
  async look(): Promise<boolean> {
    const engine = this.c.engines.peek();
    if (this.disposed || this.looking || !engine || engine.isClosed || !this.watching()) return false;
    this.looking = true;
    try {
      if (!(await engine.storeChangedElsewhere())) return false;
      const until = Date.now() + STORE_SETTLE_MAX_MS;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, this.settleMs));
        // Nothing is asked of an engine that is closing, nor done for a window that is.
        if (this.disposed || engine.isClosed) return false;
        if (!(await engine.storeChangedElsewhere()) || Date.now() >= until) break;
      }
      await storeChanged(this.c);
      return true;
    } catch {
      // The engine closed or failed meanwhile: the next look, or its next open, shows the store.
      return false;
    } finally {
      this.looking = false;
    }
  }

  dispose(): void {
    this.disposed = true;
    clearInterval(this.timer);
  }
}
