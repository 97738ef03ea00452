// The requests a transport received and has not answered yet, so that a server whose client
// closed its side (stdin at EOF: `printf ... | code-memory mcp`) can answer what it was sent
// before it closes: the SDK's close() aborts the handlers still running, and drops their answers.

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CancelledNotificationSchema, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * How long the calls running when a server is stopped (SIGTERM, SIGINT, SIGHUP, the window
 * closing) may take to finish before the store closes under them.
 */
export const STOP_ANSWER_LIMIT_MS = 10_000;

export class InFlightRequests {
  /** Requests by id (a client may use one twice), from their arrival to their answer. */
  private readonly open = new Map<RequestId, number>();
  private waiters: Array<() => void> = [];

  get size(): number {
    let n = 0;
    for (const count of this.open.values()) n += count;
    return n;
  }

  /**
   * Wraps a connected transport's message handler and its sending, outermost: a request is counted
   * before any handler sees it (one may answer it at once), and is done when its answer is handed
   * to send. A request the client cancels is done then: the SDK sends no answer for it.
   */
  watch(transport: Transport): void {
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message)) this.open.set(message.id, (this.open.get(message.id) ?? 0) + 1);
      else if ((message as { method?: unknown }).method === 'notifications/cancelled') {
        // As the SDK reads a cancel: it ignores one it cannot parse, or whose requestId is 0 or empty.
        const cancel = CancelledNotificationSchema.safeParse(message);
        const id = cancel.success ? cancel.data.params.requestId : undefined;
        if (id) this.done(id);
      }
      onmessage?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      // An answer, by its shape: the SDK's own check would parse every answer (megabytes) again.
      const answer = message as { id?: RequestId; method?: unknown };
      if (answer.id !== undefined && answer.method === undefined && ('result' in message || 'error' in message)) this.done(answer.id);
      return send(message, options);
    };
  }

  /** Resolves once every request received so far is answered (or cancelled). */
  answered(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private done(id: RequestId): void {
    const count = this.open.get(id);
    if (count === undefined) return;
    if (count > 1) this.open.set(id, count - 1);
    else this.open.delete(id);
    if (this.open.size > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
