// MCP over stdio for agents outside VS Code (Claude Code, Cursor, Codex...). One process
// serves one scope; stdout carries only protocol messages, so logs go to stderr.

import { PassThrough } from 'node:stream';
import type { Readable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { JSONRPCMessageSchema, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { MemoryEngineApi } from '../core/api';
import { redact } from '../core/capture/redact';
import type { Scope } from '../core/model/records';
import { InFlightRequests, STOP_ANSWER_LIMIT_MS } from './inFlightRequests';
import { accountSessionId, createMcpServer } from './mcpServer';
import { SerialWriter } from './serialWriter';
import { decodeUtf8 } from './utf8';

/** The longest request line served; a longer one is answered with an error and skipped. */
const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** How long requests received before stdin closed may take to be answered; the server then closes. */
const EOF_ANSWER_LIMIT_MS = 60_000;
/**
 * Back-pressure: no further request is read while the answers stdout has not taken hold more than
 * this many characters (a client that does not read its answers), or while MAX_IN_FLIGHT requests
 * run; reading goes on once both are below again. Without it, a client that wrote requests and
 * never read made the server hold their answers in memory without bound.
 */
const MAX_PENDING_OUTPUT_CHARS = 16 * 1024 * 1024;
const MAX_IN_FLIGHT = 64;

export interface StdioServerOptions {
  engine: MemoryEngineApi;
  scope: Scope;
  retrieveTimeoutMs?: number;
  log?: (message: string) => void;
  /**
   * When it is aborted (the CLI's SIGTERM / SIGINT / SIGHUP) no new request is started, and the
   * calls still running get STOP_ANSWER_LIMIT_MS to finish (their answers are sent if they can
   * be). When stdin closes, the requests it brought are answered first.
   */
  signal?: AbortSignal;
}

/**
 * stdin's complete lines up to `maxBytes` each, as they come; a longer line is dropped as it
 * streams in (never held whole) and reported once. The SDK's reader closes the whole connection
 * on a line over its 10 MiB buffer; behind this it never sees one. A line `accept` refuses (it
 * answered it itself) is not passed on.
 */
function boundedLines(input: Readable, maxBytes: number, onOversized: () => void, accept: (line: Buffer) => boolean): PassThrough {
  const out = new PassThrough();
  // The reader of `out` paused (back-pressure): stdin is not read until it takes what waits.
  let held = false;
  const hold = (): void => {
    if (held) return;
    held = true;
    input.pause();
    out.once('drain', () => {
      held = false;
      input.resume();
    });
  };
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  input.on('data', (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(0x0a, at);
      const end = nl < 0 ? chunk.length : nl + 1;
      const piece = chunk.subarray(at, end);
      at = end;
      if (!skipping) {
        pending.push(piece);
        pendingBytes += piece.length;
        if (pendingBytes > maxBytes) {
          skipping = true;
          pending = [];
          pendingBytes = 0;
        }
      }
      if (nl < 0) break;
      // A line ends here.
      if (skipping) {
        skipping = false;
        onOversized();
      } else {
        const line = pending.length === 1 ? pending[0] : Buffer.concat(pending);
        if (accept(line) && !out.write(line)) hold();
        pending = [];
        pendingBytes = 0;
      }
    }
  });
  input.once('end', () => out.end());
  input.once('close', () => out.end());
  input.on('error', (error) => out.destroy(error));
  return out;
}

/**
 * Why a line is not JSON, without its text: V8's message quotes the line (whole up to 20
 * characters, else 10 characters either side of the error), and a line that is not JSON is as
 * likely a password pasted into the wrong window as a broken message. Only where it went wrong
 * is kept.
 */
function parseErrorText(error: Error): string {
  if (/Unexpected end of JSON input/.test(error.message)) return 'the line is not valid JSON: it ends before its JSON value does';
  const at = /\bat position (\d+)/.exec(error.message);
  return `the line is not valid JSON${at ? ` (at character ${Number(at[1]) + 1})` : ''}`;
}

function jsonRpcError(code: number, message: string, id: string | number | null = null): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;
}

const INVALID_REQUEST = 'invalid request: not a JSON-RPC 2.0 message (a request has "jsonrpc": "2.0", a method, an id, and params that are an object)';
const INVALID_PARAMS = 'invalid params: params must be an object, and its "_meta", if any, an object as MCP defines it (a "progressToken" is a string or an integer)';
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The answer to a valid JSON-RPC 2.0 request (an id that is a string or an integer, a method,
 * params an object or an array, nothing else) that the SDK would refuse whole for what MCP asks of
 * its params (params no object, a `_meta` of another shape): its reader reports such a message
 * with no id, and a client waiting on that id would wait forever. Answered here under its id, with
 * -32602. Undefined for any other line (valid, not JSON, not a valid JSON-RPC request, a
 * notification, a response), which the SDK reads (and answers, when it refuses it, with id null).
 */
function invalidParamsAnswer(line: string): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !(typeof m.id === 'string' || Number.isSafeInteger(m.id))) return undefined;
  if (typeof m.params !== 'object' || m.params === null || !Object.keys(m).every((k) => REQUEST_KEYS.has(k))) return undefined;
  if (JSONRPCMessageSchema.safeParse(message).success) return undefined;
  return jsonRpcError(-32602, INVALID_PARAMS, m.id as string | number);
}

/** The id of a JSON-RPC request (a string with no replaced character, or a safe integer), else undefined. */
function requestIdOf(text: string): string | number | undefined {
  try {
    const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    if ((typeof id === 'string' && !id.includes('\ufffd')) || Number.isSafeInteger(id)) return id as string | number;
  } catch {
    // not JSON: no id to answer under
  }
  return undefined;
}

/**
 * Serves until stdin closes and what it brought is answered (a piped client, `printf ... |
 * code-memory mcp`, writes its requests and closes at once), or until the signal is aborted;
 * resolves then.
 */
export async function runStdioServer(options: StdioServerOptions): Promise<void> {
  // No handshake id over stdio: the account's session stands in for it, as over HTTP.
  const accountSession = accountSessionId(options.scope.project);
  const server = createMcpServer({
    context: (transportSessionId) => ({
      engine: options.engine,
      scope: options.scope,
      transportSessionId: transportSessionId ?? accountSession,
      retrieveTimeoutMs: options.retrieveTimeoutMs,
      log: options.log,
    }),
  });
  const { stdin, stdout } = process;
  const inFlight = new InFlightRequests();
  let paused = false;
  // Hands the SDK requests only while the answers are taken and the calls running are few
  // (back-pressure): the lines wait, and stdin is not read while they do.
  const flow = (): void => {
    const busy = out.pendingChars > MAX_PENDING_OUTPUT_CHARS || inFlight.size >= MAX_IN_FLIGHT;
    if (busy === paused) return;
    paused = busy;
    if (busy) lines.pause();
    else lines.resume();
  };
  // Every write to stdout goes through it: answers, and the errors written here.
  const out = new SerialWriter(stdout, flow);
  const lines = boundedLines(
    stdin,
    MAX_LINE_BYTES,
    () => {
      options.log?.(`mcp: skipped a request line over ${MAX_LINE_BYTES} bytes`);
      void out.write(jsonRpcError(-32600, `request too large: a message line may hold at most ${MAX_LINE_BYTES} bytes`));
    },
    (line) => {
      // The SDK would decode the line with U+FFFD for invalid bytes, two keys differing only in
      // them becoming one: a line that is not UTF-8 is refused here, whole, as one that is not JSON.
      const text = decodeUtf8(line);
      if (text === undefined) {
        options.log?.('mcp: refused a request line that is not valid UTF-8');
        // Under the request's id where one can be read (a client waits on it), else with id null.
        const id = requestIdOf(line.toString('utf8'));
        void out.write(id === undefined ? jsonRpcError(-32700, 'parse error: the line is not valid UTF-8') : jsonRpcError(-32602, 'invalid params: the request is not valid UTF-8; send it encoded as UTF-8', id));
        return false;
      }
      const answer = invalidParamsAnswer(text);
      if (answer === undefined) return true;
      options.log?.('mcp: refused a request whose params are not as MCP defines them');
      void out.write(answer);
      return false;
    },
  );
  // One line is never over MAX_LINE_BYTES here; the SDK's own limit only has to be above it.
  const transport = new StdioServerTransport(lines, stdout, { maxBufferSize: MAX_LINE_BYTES + 64 * 1024 });
  transport.send = (message) => {
    const written = out.write(serializeMessage(message));
    flow();
    return written;
  };
  // A line that is not JSON, or not JSON-RPC: the SDK skips it; the client hears why.
  transport.onerror = (error: Error) => {
    const parse = error instanceof SyntaxError;
    // The SDK's complaint about a message that is not JSON-RPC is a dump of its schema: the log
    // keeps it (redacted, as the schema's complaints may name a key of the message).
    options.log?.(`mcp: ${parse ? parseErrorText(error) : redact(error.message)}`);
    void out.write(jsonRpcError(parse ? -32700 : -32600, parse ? `parse error: ${parseErrorText(error)}` : INVALID_REQUEST));
  };
  const stopped = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    if (options.signal?.aborted) resolve();
    options.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  // The end of what stdin brought, once the SDK has read all of it (its last requests counted).
  const inputEnded = new Promise<void>((resolve) => {
    lines.once('end', () => resolve());
    lines.once('close', () => resolve());
  });
  // Once the client is gone (stdout failed), a request still coming is not started: no one is
  // left to answer. Nor once serving is stopped: the store closes after the running calls.
  let clientGone = false;
  void out.failed.then(() => (clientGone = true));
  void stopped.then(() => (clientGone = true));
  await server.connect(transport);
  inFlight.watch(transport);
  // After each line the SDK read (its request counted in flight): enough running to wait?
  lines.on('data', flow);
  // Outermost, so that a request dropped here is not counted as in flight.
  const onmessage = transport.onmessage;
  transport.onmessage = (message) => {
    if (clientGone && isJSONRPCRequest(message)) return;
    onmessage?.(message);
  };
  const gone = out.failed.then(() => 'gone' as const);
  await Promise.race([stopped, inputEnded, gone]);
  await answerAll(inFlight, out, EOF_ANSWER_LIMIT_MS, stopped, options.log);
  lines.off('data', flow);
  await server.close();
}

/**
 * Waits until every request received is answered and written, for `limitMs` at most; once
 * stopped, until the calls still running have finished, for STOP_ANSWER_LIMIT_MS at most (an
 * answer stdout is slow to take is not waited for). Once stdout failed (the client is gone) the
 * answers cannot reach it, but the calls still running are waited for all the same: the store
 * closes after this, and a call cut off by it would leave its writes half done (a record without
 * its search cell).
 */
async function answerAll(inFlight: InFlightRequests, out: SerialWriter, limitMs: number, stopped: Promise<void>, log?: (message: string) => void): Promise<void> {
  const timers: NodeJS.Timeout[] = [];
  let over = false;
  // A wait begun after this returned (the server's close resolves `stopped`) holds no timer.
  const after = (ms: number): Promise<'timeout'> => new Promise((resolve) => void (over || timers.push(setTimeout(() => resolve('timeout'), ms))));
  const answered = inFlight.answered().then(() => 'done' as const);
  const written = answered.then(() => out.idle()).then(() => 'done' as const);
  const gone = out.failed.then(() => 'gone' as const);
  const stoppedThen = stopped.then(() => Promise.race([answered, after(STOP_ANSWER_LIMIT_MS)]));
  try {
    let outcome = await Promise.race([written, after(limitMs), stoppedThen, gone]);
    // The client left: its answers are dropped as they come (a write to it fails at once).
    if (outcome === 'gone') outcome = await Promise.race([answered, after(limitMs), stoppedThen]);
    if (outcome === 'timeout') {
      log?.(`mcp: ${inFlight.size} request(s) still running, when stdin closed, the client left or the server was stopped, are dropped`);
    }
  } finally {
    over = true;
    for (const timer of timers) clearTimeout(timer);
  }
}
