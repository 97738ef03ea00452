// The shared model host (bundled to dist/modelHost.js): one process per machine user and
// embedder configuration that holds the model and embeds for every server and VS Code window
// of that user, so that N of them pay for one model (about 100 MB with USE-lite), not N.
//
// Started detached by the first client that finds no host (client.ts), with its socket path and
// the embedder configuration as arguments; exits once no client has been connected for
// CODE_MEMORY_MODEL_HOST_IDLE_MS (default a minute: long enough for a window to reload or the
// next CLI command to find the model loaded, short enough that closing everything leaves no
// process behind for long). Requests of all clients share one ModelQueue: a query's one text
// waits for at most one model call of another client's backfill, never for its whole batch.
import { chmodSync, statSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import { packVectors } from '../embedder';
import { createEmbedder, type EmbedderConfig } from '../factory';
import { ModelQueue } from '../modelQueue';
import { connectSocket, encodeFrame, FrameReader, type HostReply, type HostRequest } from './protocol';

const MAX_TEXTS = 10_000;
const DEFAULT_IDLE_MS = 60_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function parseRequest(header: unknown): HostRequest | string {
  const h = header as Partial<Record<string, unknown>> | null;
  if (!h || typeof h !== 'object' || !Number.isSafeInteger(h.id)) return 'A request needs a numeric id.';
  if (h.type === 'hello') return { type: 'hello', id: h.id as number };
  if (h.type !== 'embed') return `Unknown request type ${JSON.stringify(h.type)}.`;
  if (!Array.isArray(h.texts) || !h.texts.every((t) => typeof t === 'string')) return 'embed needs texts: an array of strings.';
  if (h.texts.length > MAX_TEXTS) return `embed takes at most ${MAX_TEXTS} texts per request (got ${h.texts.length}).`;
  return { type: 'embed', id: h.id as number, texts: h.texts as string[] };
}

export async function runHost(socketPath: string, config: EmbedderConfig, idleMs: number): Promise<void> {
  const embedder = await createEmbedder(config);
  const queue = new ModelQueue(embedder);
  let connections = 0;
  let idleTimer: NodeJS.Timeout | null = null;

  const send = (socket: net.Socket, reply: HostReply, payload?: Float32Array): void => {
    if (!socket.destroyed) socket.write(encodeFrame(reply, payload));
  };

  const serve = async (socket: net.Socket, left: AbortSignal, id: number, texts: string[]): Promise<void> => {
    let vectors: Float32Array[];
    try {
      vectors = await queue.embed(texts, left);
    } catch (err) {
      if (!left.aborted) send(socket, { type: 'error', id, error: message(err) });
      return;
    }
    send(socket, { type: 'result', id, count: vectors.length }, packVectors(vectors, embedder.dimension));
  };

  // The socket file this host made (its inode): see stop.
  let ownSocket: number | null = null;
  const stop = async (): Promise<void> => {
    // Closing the server removes the socket path. Only this host's own file: one removed while
    // this host ran (a temp cleaner) may be another host's by now, which must stay reachable.
    if (ownSocket !== null && inodeOf(socketPath) === ownSocket) server.close();
    await embedder.close?.().catch(() => undefined);
    process.exit(0);
  };
  const armIdle = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => void stop(), idleMs);
  };

  const server = net.createServer((socket) => {
    connections++;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    const reader = new FrameReader();
    // A client that left does not get the rest of its work done.
    const left = new AbortController();
    socket.on('data', (data) => {
      let frames;
      try {
        frames = reader.push(data);
      } catch {
        socket.destroy(); // a client that does not speak the protocol gets nothing more
        return;
      }
      for (const { header } of frames) {
        const req = parseRequest(header);
        if (typeof req === 'string') {
          const id = (header as { id?: unknown } | null)?.id;
          if (Number.isSafeInteger(id)) send(socket, { type: 'error', id: id as number, error: req });
          else socket.destroy();
          continue;
        }
        if (req.type === 'hello') send(socket, { type: 'hello', id: req.id, name: embedder.name, dimension: embedder.dimension, pid: process.pid });
        else if (req.texts.length === 0) send(socket, { type: 'result', id: req.id, count: 0 }, new Float32Array(0));
        else void serve(socket, left.signal, req.id, req.texts);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      left.abort(new Error('the client left'));
      if (--connections === 0) armIdle();
    });
  });

  await listen(server, socketPath);
  chmodSync(socketPath, 0o600);
  ownSocket = inodeOf(socketPath);
  armIdle();
  // The client that started the host is opening its store meanwhile: its first question should
  // find the model loaded. A load that fails is tried again, and reported, by the first request.
  void embedder.warmUp?.().catch(() => undefined);
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

function inodeOf(file: string): number | null {
  try {
    return statSync(file).ino;
  } catch {
    return null;
  }
}

/** Listens on the socket path; a stale socket file is replaced, a live host's is left alone. */
async function listen(server: net.Server, socketPath: string): Promise<void> {
  const attempt = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await attempt();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    const live = await connectSocket(socketPath).then((probe) => (probe.destroy(), true), () => false);
    if (live) process.exit(0); // another host got there first
    unlinkSync(socketPath);
    await attempt();
  }
}

if (require.main === module) {
  const [socketPath, configJson] = process.argv.slice(2);
  const idle = Number(process.env.CODE_MEMORY_MODEL_HOST_IDLE_MS);
  process.title = 'code-memory-model-host';
  runHost(socketPath, JSON.parse(configJson) as EmbedderConfig, Number.isFinite(idle) && idle > 0 ? idle : DEFAULT_IDLE_MS).catch((err: unknown) => {
    process.stderr.write(`code-memory model host: ${message(err)}\n`);
    process.exit(1);
  });
}
