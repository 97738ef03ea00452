// JSON responses of the loopback server: never cached, never sniffed as another type, always UTF-8.

import type { ServerResponse } from 'node:http';

/**
 * The headers every answer of the server carries, whoever writes it (sendJson, the MCP SDK's
 * transport, an error written straight to the socket): no cache keeps an answer (they hold
 * memory text), and no browser reads one as anything but its content type.
 */
export const NO_STORE_HEADERS: Readonly<Record<string, string>> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...NO_STORE_HEADERS, ...headers });
  res.end(text);
}
