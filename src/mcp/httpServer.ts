// The loopback HTTP server: MCP over Streamable HTTP at /v1/mcp/memory plus the REST routes,
// behind one bearer token. Stateless: every MCP POST gets a fresh server and transport, so no
// state (or scope) leaks between requests.

import { STATUS_CODES, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { MemoryEngineApi } from '../core/api';
import { GitFreshness } from '../core/capture/freshness';
import type { Scope } from '../core/model/records';
import type { ToolContext } from '../core/tools/types';
import { accountSessionId, createMcpServer, prepareToolSpecs } from './mcpServer';
import { sendJson } from './httpJson';
import { handleRest } from './rest';
import { BodyTooLargeError, hostAllowed, isLoopbackHost, newToken, originAllowed, readBody, tokenMatches } from './security';
import { registerSecret } from '../core/capture/redact';

export const MCP_PATH = '/v1/mcp/memory';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface HttpServerOptions {
  engine: MemoryEngineApi;
  scope: Scope;
  /** 0 or absent: a random free port. */
  port?: number;
  /** Absent: a new random token. */
  token?: string;
  /** Loopback only: 127.0.0.1 (default), localhost or ::1. */
  host?: string;
  maxBodyBytes?: number;
  retrieveTimeoutMs?: number;
  /** The repository the scope's files live in: tool results then say whether records still hold. */
  repoRoot?: string;
  log?: (message: string) => void;
}

export interface RunningHttpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:43123/v1/mcp/memory */
  url: string;
  /** http://127.0.0.1:43123 (REST routes live under it). */
  baseUrl: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}

/**
 * The URL of a request target: a path (origin-form, read as a path even when it starts with '//')
 * or an absolute http(s) URL. Undefined for anything else, or what the URL parser refuses.
 */
function requestUrl(target: string, port: number): URL | undefined {
  const origin = `http://127.0.0.1:${port}`;
  try {
    if (target.startsWith('/')) return new URL(`${origin}${target}`);
    const url = new URL(target);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON error written straight to a socket that has no response object, then closed. */
function rawJsonError(socket: Duplex, status: number, error: string, message: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error, message });
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host)) throw new Error(`refusing to listen on '${host}': the memory server binds to loopback only (127.0.0.1, localhost or ::1)`);
  const token = options.token ?? newToken();
  if (token.length < 16) throw new Error('the bearer token must be at least 16 characters');
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = options.log ?? (() => {});
  const accountSession = accountSessionId(options.scope.project);
  const freshness = options.repoRoot ? GitFreshness.forRepository(options.repoRoot) : undefined;
  const context = (transportSessionId: string | undefined): ToolContext => ({
    engine: options.engine,
    scope: options.scope,
    transportSessionId: transportSessionId ?? accountSession,
    retrieveTimeoutMs: options.retrieveTimeoutMs,
    freshness,
    log,
  });
  const specs = prepareToolSpecs();
  let port = 0;
  const sockets = new Set<import('node:net').Socket>();

  // A request without Host reaches handle() and its JSON 403 (Node would answer an empty 400).
  const server: Server = createServer({ requireHostHeader: false }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      // The path only: a query string may carry what a client should not have put there.
      log(`http: ${req.method} ${(req.url ?? '').split('?')[0]}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: 'the memory server failed to handle this request; see the Code Memory log' });
      else res.end();
    });
  });
  // What Node's parser refuses before a request exists (a garbled request line, an unknown
  // method, headers over the limit, CONNECT) still gets a JSON error, then the connection closes.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    rawJsonError(socket, tooLarge ? 431 : 400, tooLarge ? 'headers_too_large' : 'bad_request', tooLarge ? 'the request headers are too large' : 'the request could not be parsed as HTTP/1.1');
  });
  server.on('connect', (_req, socket) => rawJsonError(socket, 405, 'method_not_allowed', 'CONNECT is not supported'));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Node keeps the first of repeated Host or Authorization lines and drops the rest, which a
    // proxy in front may read otherwise: a request must have one of each at most (RFC 9112 3.2).
    if ((req.headersDistinct.host?.length ?? 0) > 1 || (req.headersDistinct.authorization?.length ?? 0) > 1) {
      return sendJson(res, 400, { error: 'bad_request', message: 'a request has one Host line and at most one Authorization line' });
    }
    if (!hostAllowed(req.headers.host, port)) {
      return sendJson(res, 403, { error: 'forbidden_host', message: 'Host header must name the loopback address this server listens on' });
    }
    if (!originAllowed(req.headers.origin, port)) {
      return sendJson(res, 403, { error: 'forbidden_origin', message: 'cross-origin requests are refused; only this server\'s own origin (loopback, its port) may call it' });
    }
    if (!tokenMatches(req.headers.authorization, token)) {
      return sendJson(res, 401, { error: 'unauthorized', message: 'send Authorization: Bearer <token> (the token is shown by `code-memory serve` and stored next to the store)' }, { 'www-authenticate': 'Bearer realm="code-memory"' });
    }
    const url = requestUrl(req.url ?? '/', port);
    if (!url) return sendJson(res, 400, { error: 'invalid_url', message: 'the request target must be a path such as /v1/health or /v1/mcp/memory' });
    // An absolute URL as the target names the request's host itself (RFC 9112 3.2.2): it is held
    // to the same rule as the Host header.
    if (!(req.url ?? '/').startsWith('/') && !hostAllowed(url.host, port)) {
      return sendJson(res, 403, { error: 'forbidden_host', message: 'the request target must name the loopback address this server listens on' });
    }
    if (url.pathname === MCP_PATH) return handleMcp(req, res);
    return handleRest(req, res, url, {
      engine: options.engine,
      scope: options.scope,
      readJson: () => readJsonBody(req, res),
      context: () => context(undefined),
    });
  }

  /**
   * Reads and parses a JSON body; answers 413/400 itself and returns undefined when it did, as a
   * JSON-RPC error for MCP's endpoint and a REST error elsewhere.
   */
  async function readJsonBody(req: IncomingMessage, res: ServerResponse, jsonRpc = false): Promise<{ value: unknown } | undefined> {
    let body: Buffer;
    try {
      body = await readBody(req, maxBody);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        const message = `request bodies are limited to ${maxBody} bytes`;
        if (jsonRpc) jsonRpcError(res, 413, -32000, message, { connection: 'close' });
        else sendJson(res, 413, { error: 'payload_too_large', message }, { connection: 'close' });
        req.destroy();
        return undefined;
      }
      throw error;
    }
    try {
      return { value: JSON.parse(body.toString('utf8')) as unknown };
    } catch {
      if (jsonRpc) jsonRpcError(res, 400, -32700, 'Parse error: the request body is not valid JSON');
      else sendJson(res, 400, { error: 'invalid_json', message: 'the request body is not valid JSON' });
      return undefined;
    }
  }

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      // Stateless server: no standalone SSE stream and no session to delete.
      return jsonRpcError(res, 405, -32000, 'Method not allowed: this stateless server accepts POST only', { allow: 'POST' });
    }
    const parsed = await readJsonBody(req, res, true);
    if (!parsed) return;
    // The transport keeps no sessions, but an initialize answer still hands out an Mcp-Session-Id
    // (never validated), the account's: clients send it back, and retrieve_memory keys prompt
    // history on it when a call has no session_id, as the contract's handshake fallback describes.
    if (isInitialize(parsed.value)) res.setHeader('mcp-session-id', accountSession);
    const mcp = createMcpServer({ context, specs });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, parsed.value);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  // A client that pastes the token into a prompt never gets it stored (the request log, prompts).
  const forgetToken = registerSecret(token);
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  const baseUrl = `http://${hostInUrl}:${port}`;
  let closed = false;
  return {
    url: `${baseUrl}${MCP_PATH}`,
    baseUrl,
    port,
    token,
    async close() {
      if (closed) return;
      closed = true;
      forgetToken();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Keep-alive sockets of finished requests would hold close() open.
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
