// An Embedder that asks the machine user's shared model host (host.ts) over its local socket,
// starting the host when there is none. A host that dies (killed, idle, crashed) is started
// again by the next request, which is sent once more; an error the host reports is not retried.
// The socket is only referenced while requests are in flight, so an idle client never keeps a
// CLI process alive.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import type { Embedder } from '../embedder';
import { embedderName, type EmbedderConfig } from '../factory';
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

class Connection {
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private lostError: Error | null = null;

  constructor(private readonly socket: net.Socket) {
    const reader = new FrameReader();
    socket.unref();
    socket.on('data', (data) => {
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
   * hung up on, so that the caller gets an error instead of waiting for ever.
   */
  request(req: Request, timeoutMs: number): Promise<Reply> {
    if (this.lostError) return Promise.reject(this.lostError);
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => this.socket.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
      const done = <T>(settle: (value: T) => void) => (value: T) => {
        clearTimeout(timer);
        settle(value);
      };
      this.pending.set(id, { resolve: done(resolve), reject: done(reject) });
      this.socket.ref();
      this.socket.write(encodeFrame({ ...req, id } satisfies HostRequest));
    });
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
    this.lostError = new ConnectionLost(`The shared model host went away (${err.message}).`);
    for (const p of this.pending.values()) p.reject(this.lostError);
    this.pending.clear();
  }
}

export class SharedModelEmbedder implements Embedder {
  private live: Connection | null = null;
  private opening: Promise<Connection> | null = null;
  private closed = false;

  private constructor(
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
    const e = new SharedModelEmbedder(socketPath, start, timeout, header.name, header.dimension, header.pid);
    e.live = connection;
    return e;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) throw new Error('This embedder is closed.');
    if (texts.length === 0) return [];
    try {
      return await this.embedOnce(texts);
    } catch (err) {
      if (!(err instanceof ConnectionLost) || this.closed) throw err;
      return this.embedOnce(texts);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.live ?? (await this.opening?.catch(() => null));
    this.live = null;
    connection?.close();
  }

  private async embedOnce(texts: string[]): Promise<Float32Array[]> {
    // Generous: a backstop against a host that stopped answering, not a deadline for the model.
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
        await greet(c, this.socketPath, this.name, this.dimension, this.startTimeoutMs);
        return (this.live = c);
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
