// What the shared model host and its clients agree on: where the host listens, and the frames
// they exchange over that local socket.
//
// Frame: [u32 header bytes][u32 payload bytes][header JSON][payload], little-endian. Vectors
// travel as one packed Float32 payload; requests have none.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { EmbedderConfig } from '../factory';

/** Bumped when the frames or the way a model embeds change: old hosts are then never reused. */
export const PROTOCOL_VERSION = 1;

/** Refuses a frame larger than this (bytes), from either side, before reading it. */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

export type HostRequest = { type: 'hello'; id: number } | { type: 'embed'; id: number; texts: string[] };

export type HostReply =
  | { type: 'hello'; id: number; name: string; dimension: number; pid: number }
  | { type: 'result'; id: number; count: number }
  | { type: 'error'; id: number; error: string };

export function encodeFrame(header: unknown, payload?: Float32Array): Buffer {
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const body = payload ? Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength) : Buffer.alloc(0);
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32LE(head.length, 0);
  prefix.writeUInt32LE(body.length, 4);
  return Buffer.concat([prefix, head, body]);
}

/**
 * Cuts a byte stream into frames. `push` returns the complete frames so far; a frame that
 * announces more than MAX_FRAME_BYTES, or a header that is not JSON, throws.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(data: Buffer): Array<{ header: unknown; payload: Buffer }> {
    this.chunks.push(data);
    this.buffered += data.length;
    const frames: Array<{ header: unknown; payload: Buffer }> = [];
    for (;;) {
      if (this.buffered < 8) return frames;
      if (this.chunks[0].length < 8) this.chunks = [Buffer.concat(this.chunks)];
      const headBytes = this.chunks[0].readUInt32LE(0);
      const bodyBytes = this.chunks[0].readUInt32LE(4);
      if (headBytes + bodyBytes > MAX_FRAME_BYTES) throw new Error(`A frame of ${headBytes + bodyBytes} bytes is over the ${MAX_FRAME_BYTES}-byte limit.`);
      const end = 8 + headBytes + bodyBytes;
      // Joined once the whole frame is here, not at every chunk of a large one.
      if (this.buffered < end) return frames;
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      let header: unknown;
      try {
        header = JSON.parse(all.subarray(8, 8 + headBytes).toString('utf8'));
      } catch {
        throw new Error('A frame header is not JSON.');
      }
      // A view: unpackVectors copies it once, aligned for Float32.
      frames.push({ header, payload: all.subarray(8 + headBytes, end) });
      const rest = all.subarray(end);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
    }
  }
}

/** The packed payload of a result frame, as `count` vectors of `dimension` floats. */
export function unpackVectors(payload: Buffer, count: number, dimension: number): Float32Array[] {
  if (payload.length !== count * dimension * 4) throw new Error(`The model host sent ${payload.length} bytes for ${count} vectors of ${dimension} dimensions.`);
  const floats = new Float32Array(payload.buffer.slice(payload.byteOffset, payload.byteOffset + payload.length));
  const out: Float32Array[] = [];
  for (let i = 0; i < count; i++) out.push(floats.subarray(i * dimension, (i + 1) * dimension));
  return out;
}

/** A connected socket to `socketPath`, or the connection's error (ENOENT, ECONNREFUSED...). */
export function connectSocket(socketPath: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * The folder of the machine user's model hosts: created private, and refused when it is not a
 * real folder of this user that nobody else can enter (texts sent to a host are memory content,
 * so a socket someone else could have put there must never be used).
 */
export function hostFolder(base = process.env.XDG_RUNTIME_DIR || os.tmpdir()): string {
  const uid = process.getuid?.();
  if (uid === undefined) throw new Error('A shared model host needs a POSIX system (a private folder for its socket).');
  const dir = path.join(base, `code-memory-${uid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a folder; the shared model host will not use it.`);
  if (stat.uid !== uid) throw new Error(`${dir} belongs to another user; the shared model host will not use it.`);
  if ((stat.mode & 0o077) !== 0) throw new Error(`${dir} can be entered by other users (mode ${(stat.mode & 0o777).toString(8)}); the shared model host will not use it.`);
  return dir;
}

/** A Unix socket's path must fit in sun_path: 104 bytes on macOS, 108 on Linux, with its NUL. */
const MAX_SOCKET_PATH_BYTES = 103;

/** One host per embedder configuration and protocol version: the socket's name says which. */
export function hostSocketPath(folder: string, config: EmbedderConfig): string {
  const key = createHash('sha256').update(JSON.stringify([PROTOCOL_VERSION, config])).digest('hex').slice(0, 12);
  const socketPath = path.join(folder, `model-${config.provider}-${key}.sock`);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(`The shared model host's socket path is too long for the system (${socketPath}); set XDG_RUNTIME_DIR to a shorter folder.`);
  }
  return socketPath;
}
