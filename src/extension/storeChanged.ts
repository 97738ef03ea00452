import type { Container } from './container';

/**
 * After a command wrote to or forgot from the store: everything in the window that shows what
 * the store holds looks again, so nothing keeps counting or showing a record that went. The
 * command registrar calls it after every command that changes the store, and the chat tools
 * after a remember; the views refresh on their own timers, the panels and the count at once.
 */
export async function storeChanged(c: Pick<Container, 'sessionsView' | 'memoriesView' | 'requestLogView' | 'codeLens' | 'statusBar' | 'details' | 'recall'>): Promise<void> {
  c.sessionsView.refresh();
  c.memoriesView.refresh();
  c.requestLogView.refresh();
  c.codeLens.refresh();
  await Promise.all([c.statusBar.refreshCount(), c.details.refresh(), c.recall.refresh()]);
}
