// The loopback HTTP server: MCP over Streamable HTTP at /v1/mcp/memory plus the REST routes,
// behind one bearer token. Stateless: every MCP POST gets a fresh server and transport, so no
// state (or scope) leaks between requests.

import { STATUS_CODES, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { MemoryEngineApi } from '../core/api';
import { GitFreshness } from '../core/capture/freshness';
import type { Scope } from '../core/model/records';
import type { ToolContext } from '../core/tools/types';
import { STOP_ANSWER_LIMIT_MS } from './inFlightRequests';
import { accountSessionId, createMcpServer, prepareToolSpecs } from './mcpServer';
import { NO_STORE_HEADERS, sendJson } from './httpJson';
import { handleRest } from './rest';
import { BodyTooLargeError, hostAllowed, isLoopbackHost, newToken, originAllowed, readBody, tokenMatches } from './security';
import { registerSecret } from '../core/capture/redact';
import { decodeUtf8 } from './utf8';

export const MCP_PATH = '/v1/mcp/memory';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Node's defaults: a client has 60 s for its headers and 300 s for the whole request. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;
/** How long a connection answered with an error may stay open for the client to read it. */
const ERROR_LINGER_MS = 5000;
/**
 * What a request without the right token is told: where each server's token is (the CLI's in
 * the token file `serve` names on start; the extension's in VS Code's secret storage, which
 * its command shows).
 */
const UNAUTHORIZED_MESSAGE =
  'send Authorization: Bearer <token>. The token of `code-memory serve` is the "token" field of its token file, whose path serve prints on start (server.json in the store folder unless --token-file names another); the VS Code extension\'s is shown by its command "Code Memory: Show MCP Server Info"';

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
  /** How long a client may take to send its headers (408 after). Default 60 s; 0: no limit. */
  headersTimeoutMs?: number;
  /** How long a client may take to send its whole request, body included (408 after). Default 300 s; 0: no limit. */
  requestTimeoutMs?: number;
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
 * A batch without the cancels (notifications/cancelled) of its own requests. The SDK's Protocol
 * sends nothing for a request it cancelled, and its transport (JSON answers) answers a POST only
 * once every request of the body has an answer: such a POST would never be answered. Each POST is
 * a stateless exchange of its own, so a cancel can only name a request of the same body, whose
 * answer is being computed anyway: it is moot, and dropped. Any other message, a cancel alone or
 * of an id the body does not hold included, goes on as sent.
 */
function withoutOwnCancels(body: unknown): unknown {
  if (!Array.isArray(body)) return body;
  const messages = body.map(asObject);
  const requestIds = new Set<unknown>(messages.flatMap((m) => (typeof m?.method === 'string' && m.id !== undefined ? [m.id] : [])));
  const ownCancel = (m: Record<string, unknown> | undefined): boolean =>
    m?.jsonrpc === '2.0' && m.method === 'notifications/cancelled' && !('id' in m) && requestIds.has(asObject(m.params)?.requestId);
  return messages.some(ownCancel) ? body.filter((_, i) => !ownCancel(messages[i])) : body;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The URL of a request target: a path (origin-form, read as a path even when it starts with '//')
 * or an absolute http(s) URL. Undefined for anything else, or what the URL parser refuses, and
 * for a target with a backslash: the URL parser reads it as '/', which a proxy in front or the
 * client may not (RFC 3986 has no such rule). Routes go by targetPath, not by its pathname.
 */
function requestUrl(target: string, port: number): URL | undefined {
  if (target.includes('\\')) return undefined;
  const origin = `http://127.0.0.1:${port}`;
  try {
    if (target.startsWith('/')) return new URL(`${origin}${target}`);
    const url = new URL(target);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The path a request is routed by: the target's path as sent (before any '?' or '#'; of an
 * absolute URL, what follows its authority), its '.' and '..' segments resolved (RFC 3986
 * 5.2.4), so /v1/./health is /v1/health. A percent-encoded dot is no dot segment here (the URL
 * parser takes %2e for '.'): /v1/nodes/%2e%2e reaches the node route as an id, and is refused
 * there as malformed, instead of becoming /v1/.
 */
function targetPath(target: string): string {
  const rest = target.startsWith('/') ? target : target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const raw = rest.split(/[?#]/, 1)[0];
  const out: string[] = [];
  const segments = raw.split('/').slice(1);
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '..') out.pop();
    if (segment === '.' || segment === '..') {
      // A path that ends in a dot segment names a folder: /v1/nodes/.. is /v1/.
      if (last) out.push('');
    } else out.push(segment);
  });
  return `/${out.join('/')}`;
}

/**
 * A JSON error written straight to a socket (no response object, or one that has written nothing
 * yet), then closed: the client may read it for a few seconds, then the socket is destroyed.
 */
function rawJsonError(socket: Duplex, status: number, error: string, message: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error, message });
  const headers = Object.entries(NO_STORE_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  // The server keeps sockets half-open (allowHalfOpen): one whose client never closes its side
  // would otherwise stay open for good.
  const linger = setTimeout(() => socket.destroy(), ERROR_LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * Reads the rest of a body refused for its size and drops it, until its end or for ERROR_LINGER_MS
 * at most (a client that goes on sending longer is cut off).
 */
function discardBody(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(linger);
      resolve();
    };
    const linger = setTimeout(done, ERROR_LINGER_MS);
    req.once('end', done).once('close', done).once('error', done);
    req.resume();
  });
}

/** The error of a request whose client went away (closed or reset the connection mid-request). */
function clientLeft(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException | undefined;
  return e?.code === 'ECONNRESET' || e?.code === 'ECONNABORTED' || e?.message === 'aborted';
}

/** What the 'clientError' event answers for Node's error codes: the status, error and message. */
function clientErrorAnswer(code: string | undefined): [number, string, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'headers_too_large', 'the request headers are too large'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'payload_too_large', 'the chunk extensions of the request body are too large'];
    // A client too slow with its headers or its whole request (Node 18+ reports both as
    // ERR_HTTP_REQUEST_TIMEOUT; older parsers named the headers' own).
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return [408, 'request_timeout', 'the request was not received in time; send the headers and body without pausing'];
    default:
      return [400, 'bad_request', 'the request could not be parsed as HTTP/1.1'];
  }
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

/** An Accept header that takes JSON: none, any type, application/json or application/*. */
const TAKES_JSON = /(?:^|,)\s*(?:\*\/\*|application\/(?:json|\*))\s*(?:;[^,]*)?(?=,|$)/i;

/**
 * A plain JSON client's request as the transport takes it: the SDK refuses (406) a POST whose
 * Accept does not name both application/json and text/event-stream, but this server answers every
 * request with JSON (enableJsonResponse), never a stream, so a caller that sends no Accept, any
 * type or application/json alone (the contract's raw JSON-RPC request names no header) is served.
 * One that takes no JSON (text/html) is still refused. The transport reads the raw headers.
 */
function acceptJson(req: IncomingMessage): void {
  const accept = req.headers.accept;
  if (accept !== undefined && (!TAKES_JSON.test(accept) || /text\/event-stream/i.test(accept))) return;
  const both = 'application/json, text/event-stream';
  const raw: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() !== 'accept') raw.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
  raw.push('Accept', both);
  req.rawHeaders.splice(0, req.rawHeaders.length, ...raw);
  req.headers.accept = both;
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  // An IPv6 address as a URL writes it ([::1]) is the address to bind.
  const host = (options.host ?? '127.0.0.1').replace(/^\[(.+)\]$/, '$1');
  if (!isLoopbackHost(host)) throw new Error(`refusing to listen on '${host}': the memory server binds to loopback only (127.0.0.1, localhost or ::1)`);
  const token = options.token ?? newToken();
  if (token.length < 16) throw new Error('the bearer token must be at least 16 characters');
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = options.headersTimeoutMs ?? (requestTimeout > 0 ? Math.min(DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout) : DEFAULT_HEADERS_TIMEOUT_MS);
  // Node checks both timeouts every 30 s by default; shorter timeouts are checked in step.
  const timeouts = [headersTimeout, requestTimeout].filter((t) => t > 0);
  const connectionsCheckingInterval = timeouts.length ? Math.min(30_000, Math.max(50, Math.floor(Math.min(...timeouts) / 2))) : 30_000;
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
  const sockets = new Set<Socket>();
  // The response of the request a socket is serving, for 'clientError': an error answer may be
  // written straight to the socket only while that response has written nothing.
  const responses = new WeakMap<Duplex, ServerResponse>();

  // A request without Host reaches handle() and its JSON 403 (Node would answer an empty 400).
  // The answers under way: a server closing lets them finish first (the store closes after it).
  const running = new Set<ServerResponse>();
  let closed = false;
  const server: Server = createServer({ requireHostHeader: false, headersTimeout, requestTimeout, connectionsCheckingInterval }, (req, res) => {
    responses.set(req.socket, res);
    // A request on a kept-alive connection after close() began: the server is going away.
    if (closed) return sendJson(res, 503, { error: 'shutting_down', message: 'the memory server is shutting down' }, { connection: 'close' });
    running.add(res);
    res.once('close', () => running.delete(res));
    handle(req, res).catch((error: unknown) => {
      // A client that closed or reset the connection mid-request (or was timed out) is no
      // failure of the server, and there is no one left to answer.
      if (clientLeft(error)) {
        res.destroy();
        return;
      }
      // The path only: a query string may carry what a client should not have put there.
      log(`http: ${req.method} ${(req.url ?? '').split('?')[0]}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: 'the memory server failed to handle this request; see the Code Memory log' });
      else res.end();
    });
  });
  // Node keeps only the first 2,000 header lines by default and drops the rest unseen, a second
  // Host or Authorization line among them: keep them all (the 16 KiB header limit still bounds them).
  server.maxHeadersCount = 0;
  // What Node's parser refuses (a garbled request line, an unknown method, headers over the limit,
  // chunk extensions over the limit) and a client too slow to send its request still get a JSON
  // error, then the connection closes.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const res = responses.get(socket);
    // A client that reset the connection reads nothing; a response already under way cannot
    // have an error answer put in the middle of it.
    if (error.code === 'ECONNRESET' || (res && res.headersSent && !res.writableEnded)) {
      socket.destroy();
      return;
    }
    rawJsonError(socket, ...clientErrorAnswer(error.code));
  });
  // An Expect other than 100-continue: Node would answer a bare 417 before any check ran. The
  // answer says nothing but that, to a caller with or without the token.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    sendJson(res, 417, { error: 'expectation_failed', message: 'the only Expect this server supports is 100-continue' }, { connection: 'close' });
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
      return sendJson(res, 401, { error: 'unauthorized', message: UNAUTHORIZED_MESSAGE }, { 'www-authenticate': 'Bearer realm="code-memory"' });
    }
    if ((req.url ?? '/').includes('\\')) return sendJson(res, 400, { error: 'invalid_url', message: 'the request target must not contain a backslash; separate path segments with /' });
    const url = requestUrl(req.url ?? '/', port);
    if (!url) return sendJson(res, 400, { error: 'invalid_url', message: 'the request target must be a path such as /v1/health or /v1/mcp/memory' });
    // An absolute URL as the target names the request's host itself (RFC 9112 3.2.2): it is held
    // to the same rule as the Host header.
    if (!(req.url ?? '/').startsWith('/') && !hostAllowed(url.host, port)) {
      return sendJson(res, 403, { error: 'forbidden_host', message: 'the request target must name the loopback address this server listens on' });
    }
    const path = targetPath(req.url ?? '/');
    if (path === MCP_PATH) return handleMcp(req, res);
    return handleRest(req, res, path, url.searchParams, {
      engine: options.engine,
      scope: options.scope,
      readJson: () => readJsonBody(req, res),
      context: () => context(undefined),
    });
  }

  /**
   * Reads and parses a JSON body; answers 413/400 itself and returns undefined when it did, as a
   * JSON-RPC error for MCP's endpoint and a REST error elsewhere. A body that is not UTF-8 is
   * refused whole (400), not decoded with U+FFFD: keys differing only in invalid bytes would
   * otherwise be stored as one.
   */
  async function readJsonBody(req: IncomingMessage, res: ServerResponse, jsonRpc = false): Promise<{ value: unknown } | undefined> {
    let body: Buffer;
    try {
      body = await readBody(req, maxBody);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        // A body that grew past the limit is read to its end first (dropped): answered while the
        // client still sends, the socket is closed under it and reset, and the client may lose
        // the answer. One declared too large is answered at once (its client may wait for it).
        if (!error.declared) await discardBody(req);
        const message = `request bodies are limited to ${maxBody} bytes`;
        if (jsonRpc) jsonRpcError(res, 413, -32000, message, { connection: 'close' });
        else sendJson(res, 413, { error: 'payload_too_large', message }, { connection: 'close' });
        if (!req.complete) req.destroy();
        return undefined;
      }
      throw error;
    }
    const text = decodeUtf8(body);
    if (text === undefined) {
      if (jsonRpc) jsonRpcError(res, 400, -32700, 'Parse error: the request body is not valid UTF-8');
      else sendJson(res, 400, { error: 'invalid_utf8', message: 'the request body is not valid UTF-8; send JSON encoded as UTF-8' });
      return undefined;
    }
    try {
      return { value: JSON.parse(text) as unknown };
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
    // An empty batch is one Invalid Request (JSON-RPC 2.0, section 6), not a batch of nothing
    // (which the transport would answer 202 with no body).
    if (Array.isArray(parsed.value) && parsed.value.length === 0) return jsonRpcError(res, 400, -32600, 'Invalid Request: an empty batch; send a request object, or an array of at least one');
    // The transport keeps no sessions, but an initialize answer still hands out an Mcp-Session-Id
    // (never validated), the account's: clients send it back, and retrieve_memory keys prompt
    // history on it when a call has no session_id, as the contract's handshake fallback describes.
    if (isInitialize(parsed.value)) res.setHeader('mcp-session-id', accountSession);
    acceptJson(req);
    // The transport writes its answers (200, 202, its own errors) without these; it keeps what
    // is set here and adds its own.
    for (const [name, value] of Object.entries(NO_STORE_HEADERS)) res.setHeader(name, value);
    const mcp = createMcpServer({ context, specs });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, withoutOwnCancels(parsed.value));
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
      await allFinished(running, STOP_ANSWER_LIMIT_MS);
      // Keep-alive sockets of finished requests would hold close() open.
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}

/** Resolves once every response in `running` has closed, or after `limitMs`. */
async function allFinished(running: Set<ServerResponse>, limitMs: number): Promise<void> {
  const closed = [...running].map((res) => new Promise<void>((resolve) => (res.closed ? resolve() : res.once('close', () => resolve()))));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)))]);
  clearTimeout(timer);
}
