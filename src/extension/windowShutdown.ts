import type * as vscode from 'vscode';

/**
 * What closing the window does (write the pending capture, end the session, close the engine),
 * run once. VS Code calls deactivate() and then disposes the extension's subscriptions at
 * once, without waiting for the promise deactivate() returned: services in the subscriptions
 * would be disposed under the shutdown that is still writing through them. So those services
 * are handed to this instead, and disposed when the shutdown is over, whichever of
 * deactivate() and the subscriptions' disposal starts it.
 */
export class WindowShutdown implements vscode.Disposable {
  private running: Promise<void> | undefined;

  constructor(
    private readonly steps: () => Promise<void>,
    private readonly services: vscode.Disposable[],
  ) {}

  /** Starts the shutdown if it has not started; resolves when it is over or after `timeoutMs`. */
  async run(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    try {
      await Promise.race([this.start(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  dispose(): void {
    void this.start();
  }

  private start(): Promise<void> {
    this.running ??= this.steps()
      .catch(() => undefined)
      .finally(() => {
        for (const service of this.services) {
          try {
            service.dispose();
          } catch {
            // the window is closing: the next service must still be disposed
          }
        }
      });
    return this.running;
  }
}
