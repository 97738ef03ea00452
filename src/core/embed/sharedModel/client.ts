// An Embedder that asks the machine user's shared model host (host.ts) over its local socket,
// starting the host when there is none. A host that dies (killed, idle, crashed) is started
// again by the next request, which is sent once more; an error the host reports is not retried.
// A host that stops answering without dying (stopped, wedged) is found out within seconds, not by
// the size of the request: while a request waits, a host silent for PROBE_AFTER_MS is asked hello,
// which it answers between two model calls however long the batch, and one that does not answer
// it within HUNG_AFTER_MS is hung. Its requests, and every later one, then run in a thread of
// this process, until a host (that one again, or a new one) answers a hello.
// The socket is only referenced while requests are in flight, so an idle client never keeps a
// CLI process alive.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import type { Embedder } from '../embedder';
import { embedderName, type EmbedderConfig } from '../factory';
import { WorkerEmbedder } from '../workerEmbedder';
import { errorMessage } from '../../errorText';
import { connectSocket, encodeFrame, FrameReader, hostFolder, hostSocketPath, unpackVectors, type HostReply, type HostRequest } from './protocol';

export interface SharedModelOptions {
  /** The private folder of the sockets (default: hostFolder()). */
  folder?: string;
  /** The host's entry; by default dist/modelHost.js next to the bundle, or host.ts under tsx. */
  hostEntry?: string;
  /** How long a host that was just started may take to listen (default 10 s). */
  startTimeoutMs?: number;
}

type Request = { type: 'hello' } | { type: 'embed'; texts: string[] };
type Reply = { header: HostReply; payload: Buffer };

/** The connection broke before the host answered: the request may be sent again. */
class ConnectionLost extends Error {}

/**
 * The host is there but does not answer, or what listens on its socket now is no host of this
 * model (or nothing starts there): it gets no more requests until a host answers a hello.
 */
class HostHung extends Error {}

/**
 * A host that sends nothing for this long while a request waits is asked hello. It answers between
 * two model calls: USE-lite's take one text (about 60 ms; 320 ms on two cores busy with other
 * processes, where hellos during a batch of 256 long texts, 81 s, came back within 1.3 s).
 */
const PROBE_AFTER_MS = 1_000;
/** A host that does not answer that hello within this long is hung (about 4 times the worst seen). */
const HUNG_AFTER_MS = 5_000;
/** While the host is hung, a hello is tried again at most this often, by a request (no timer). */
const RETRY_HOST_MS = 2_000;

class Connection {
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private lostError: Error | null = null;
  /** Embed requests waiting, watched by `watchdog`; when the host last sent a frame; when it was asked hello for being silent. */
  private waiting = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private heardAt = 0;
  private probedAt: number | null = null;

  constructor(private readonly socket: net.Socket) {
    const reader = new FrameReader();
    socket.unref();
    socket.on('data', (data) => {
      this.heardAt = Date.now();
      this.probedAt = null;
      try {
        for (const frame of reader.push(data)) this.settle(frame.header as HostReply, frame.payload);
      } catch (err) {
        socket.destroy(err as Error);
      }
    });
    socket.on('error', (err) => this.lose(err));
    socket.on('close', () => this.lose(new Error('the connection closed')));
  }

  get alive(): boolean {
    return this.lostError === null;
  }

  /**
   * Sends one request. A host that has not answered within `timeoutMs` (stopped, or wedged) is
   * hung up on, so that the caller gets an error instead of waiting for ever; an embed request
   * also has the host watched meanwhile (see PROBE_AFTER_MS), and gets HostHung when it is hung.
   */
  request(req: Request, timeoutMs: number): Promise<Reply> {
    if (this.lostError) return Promise.reject(this.lostError);
    const id = this.nextId++;
    const embed = req.type === 'embed';
    if (embed && this.waiting++ === 0) this.watch();
    return new Promise<Reply>((resolve, reject) => {
      const expired = () => (embed ? new HostHung(`The shared model host did not answer within ${timeoutMs} ms.`) : new Error(`no answer within ${timeoutMs} ms`));
      const timer = setTimeout(() => this.socket.destroy(expired()), timeoutMs);
      timer.unref();
      const done = <T>(settle: (value: T) => void) => (value: T) => {
        clearTimeout(timer);
        if (embed && --this.waiting === 0) this.unwatch();
        settle(value);
      };
      this.pending.set(id, { resolve: done(resolve), reject: done(reject) });
      this.socket.ref();
      this.socket.write(encodeFrame({ ...req, id } satisfies HostRequest));
    });
  }

  private watch(): void {
    this.heardAt = Date.now();
    this.probedAt = null;
    this.watchdog = setInterval(() => {
      const now = Date.now();
      if (this.probedAt !== null && now - this.probedAt > HUNG_AFTER_MS) {
        this.socket.destroy(new HostHung(`The shared model host stopped answering (no answer to hello within ${HUNG_AFTER_MS} ms).`));
      } else if (this.probedAt === null && now - this.heardAt > PROBE_AFTER_MS) {
        this.probedAt = now;
        // Its answer matches no request: any frame from the host is the sign of life.
        this.socket.write(encodeFrame({ type: 'hello', id: this.nextId++ } satisfies HostRequest));
      }
    }, 250);
    this.watchdog.unref();
  }

  private unwatch(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  close(): void {
    this.socket.end();
  }

  private settle(header: HostReply, payload: Buffer): void {
    const p = this.pending.get(header?.id);
    if (!p) return;
    this.pending.delete(header.id);
    if (this.pending.size === 0) this.socket.unref();
    p.resolve({ header, payload });
  }

  private lose(err: Error): void {
    if (this.lostError) return;
    this.unwatch();
    this.lostError = err instanceof HostHung ? err : new ConnectionLost(`The shared model host went away (${err.message}).`);
    for (const p of this.pending.values()) p.reject(this.lostError);
    this.pending.clear();
  }
}

export class SharedModelEmbedder implements Embedder {
  private live: Connection | null = null;
  private opening: Promise<Connection> | null = null;
  private closed = false;
  /** The host was found hung: requests run in `local` until a host answers a hello again. */
  private hung = false;
  private retrying: Promise<void> | null = null;
  private retriedAt = 0;
  private local: Promise<WorkerEmbedder> | null = null;

  private constructor(
    private readonly config: EmbedderConfig,
    private readonly socketPath: string,
    private readonly start: () => void,
    private readonly startTimeoutMs: number,
    readonly name: string,
    readonly dimension: number,
    /** The host's process id when this embedder connected (tests, doctor). */
    readonly hostPid: number,
  ) {}

  /** Connects to the host of this configuration, starting it when there is none. */
  static async connect(config: EmbedderConfig, options: SharedModelOptions = {}): Promise<SharedModelEmbedder> {
    const socketPath = hostSocketPath(options.folder ?? hostFolder(), config);
    // Found only when a host must be started: a client of a running host needs no bundle of it.
    const start = () => startHost(options.hostEntry ?? defaultHostEntry(), socketPath, config);
    const timeout = options.startTimeoutMs ?? 10_000;
    const connection = await open(socketPath, start, timeout);
    const header = await greet(connection, socketPath, embedderName(config), null, timeout);
    const e = new SharedModelEmbedder(config, socketPath, start, timeout, header.name, header.dimension, header.pid);
    e.live = connection;
    return e;
  }

  /** Whether requests go to the host now; false while it is hung and they run in this process (tests, doctor). */
  get usesHost(): boolean {
    return !this.hung;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) throw new Error('This embedder is closed.');
    if (texts.length === 0) return [];
    for (let attempt = 1; ; attempt++) {
      if (this.hung) {
        this.retryHost();
        return this.embedHere(texts);
      }
      try {
        return await this.embedOnce(texts);
      } catch (err) {
        if (this.closed) throw err;
        // A host that died is started again (or connected to again) once; one that cannot be used
        // then is treated as hung. An error the host reports is the request's.
        if (err instanceof HostHung || (err instanceof ConnectionLost && attempt > 1)) this.hung = true;
        else if (!(err instanceof ConnectionLost)) throw err;
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.live ?? (await this.opening?.catch(() => null));
    this.live = null;
    connection?.close(); // one a retry opens later is closed by it
    const local = await this.local?.catch(() => null);
    await local?.close();
  }

  /** The model in a thread of this process, started at the first request a hung host leaves. */
  private async embedHere(texts: string[]): Promise<Float32Array[]> {
    this.local ??= WorkerEmbedder.start(this.config).then(async (w) => {
      if (w.name === this.name && w.dimension === this.dimension) return w;
      await w.close();
      throw new Error(`The model in this process is ${w.name} (${w.dimension}), not the host's ${this.name} (${this.dimension}).`);
    });
    this.local.catch(() => (this.local = null)); // tried again by the next request
    return (await this.local).embed(texts);
  }

  /** Asks who listens on the socket (starting a host when nobody does); one that answers is used again. */
  private retryHost(): void {
    if (this.retrying || Date.now() - this.retriedAt < RETRY_HOST_MS) return;
    this.retriedAt = Date.now();
    this.retrying = open(this.socketPath, this.start, this.startTimeoutMs)
      .then(async (c) => {
        await greet(c, this.socketPath, this.name, this.dimension, Math.min(this.startTimeoutMs, HUNG_AFTER_MS)).catch((e: unknown) => {
          c.close();
          throw e;
        });
        if (this.closed) return c.close();
        this.live = c;
        this.hung = false;
      })
      .catch(() => undefined) // still hung: the next request after RETRY_HOST_MS asks again
      .finally(() => {
        this.retrying = null;
        this.retriedAt = Date.now();
      });
  }

  private async embedOnce(texts: string[]): Promise<Float32Array[]> {
    // Generous: a backstop against a host that answers hellos but never this request (a model call
    // that never returns), not a deadline for the model; a stopped host is found out by its hellos.
    const { header, payload } = await (await this.connect()).request({ type: 'embed', texts }, 60_000 + 1_000 * texts.length);
    if (header.type === 'error') throw new Error(`The shared model host could not embed: ${header.error}`);
    if (header.type !== 'result' || header.count !== texts.length) throw new Error(`The shared model host answered ${header.type} for ${texts.length} texts.`);
    return unpackVectors(payload, header.count, this.dimension);
  }

  private connect(): Promise<Connection> {
    if (this.live?.alive) return Promise.resolve(this.live);
    // A new connection (the host died, or another took the socket) is asked who it is first.
    this.opening ??= open(this.socketPath, this.start, this.startTimeoutMs)
      .then(async (c) => {
        await greet(c, this.socketPath, this.name, this.dimension, this.startTimeoutMs).catch((e: unknown) => {
          c.close();
          throw e;
        });
        return (this.live = c);
      })
      // No host of this model to be had (none starts, another process took the socket, it does not answer).
      .catch((e: unknown) => {
        throw this.closed ? e : new HostHung(errorMessage(e));
      })
      .finally(() => {
        this.opening = null;
      });
    return this.opening;
  }
}

/** Connects, starting the host first when nobody listens, and waits for it to listen. */
async function open(socketPath: string, start: () => void, timeoutMs: number): Promise<Connection> {
  try {
    return new Connection(await connectSocket(socketPath));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ECONNREFUSED') throw err;
  }
  start();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    try {
      return new Connection(await connectSocket(socketPath));
    } catch (err) {
      if (Date.now() > deadline) {
        throw new Error(`The shared model host did not start within ${timeoutMs} ms (${(err as Error).message}; its log: ${socketPath}.log).`);
      }
    }
  }
}

/**
 * Asks who listens on the socket. Only a host of this model (and, once known, dimension) is used:
 * any other process there gets no text and no time beyond `timeoutMs`.
 */
async function greet(connection: Connection, socketPath: string, name: string, dimension: number | null, timeoutMs: number): Promise<Extract<HostReply, { type: 'hello' }>> {
  const { header } = await connection.request({ type: 'hello' }, timeoutMs);
  if (header.type === 'error') {
    connection.close();
    throw new Error(`The shared model host could not start its embedder: ${header.error}`);
  }
  const valid = header.type === 'hello' && header.name === name && Number.isSafeInteger(header.dimension) && header.dimension > 0 && (dimension === null || header.dimension === dimension);
  if (!valid) {
    connection.close();
    throw new Error(`What listens on ${socketPath} is not a shared model host of ${name} (it answered ${JSON.stringify(header).slice(0, 200)}).`);
  }
  return header;
}

function startHost(entry: string, socketPath: string, config: EmbedderConfig): void {
  // Running from source (tests, benches under tsx): load the TypeScript entry through tsx. A
  // computed name keeps bundlers from trying to include the dev-only loader.
  const args = entry.endsWith('.ts') ? ['--require', require.resolve(['tsx', 'cjs'].join('/')), entry] : [entry];
  // Electron (a VS Code window) runs its own binary as plain Node with ELECTRON_RUN_AS_NODE.
  const flags = process.versions.electron ? [] : ['--max-semi-space-size=4'];
  const log = openSync(`${socketPath}.log`, 'w', 0o600);
  try {
    const child = spawn(process.execPath, [...flags, ...args, socketPath, JSON.stringify(config)], {
      detached: true,
      stdio: ['ignore', 'ignore', log],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' },
      windowsHide: true,
    });
    child.on('error', () => undefined); // seen as a host that never listens
    child.unref();
  } finally {
    closeSync(log);
  }
}

export function defaultHostEntry(): string {
  const candidates = [
    path.join(__dirname, 'modelHost.js'), // bundled: dist/*.js
    path.join(__dirname, 'host.ts'), // source under tsx
  ];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`The shared model host is missing (looked for ${candidates.join(', ')}). Run the build (npm run build).`);
  return found;
}
