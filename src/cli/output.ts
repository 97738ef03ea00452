// The CLI's output to a pipe or a file: a reader slower than the writer (`export | slow-consumer`)
// fills the pipe, and what is written meanwhile waits in this process. So a long output waits for
// 'drain' before writing more (writeOut), a reader gone (EPIPE) fails the command instead of
// hanging it, and the process exits only once stdout and stderr have flushed (exitWhenFlushed).

import type { Writable } from 'node:stream';

/** The first error each guarded stream reported (EPIPE once its reader is gone). */
const failures = new WeakMap<NodeJS.WritableStream, Error>();
const guarded = new WeakSet<NodeJS.WritableStream>();

/** The output could not be written: the reader stopped reading (EPIPE), or the stream failed. */
export class OutputError extends Error {
  constructor(cause: Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    super(`could not write the output${code ? ` (${code})` : ''}: ${code === 'EPIPE' ? 'the program reading it has stopped' : cause.message}; what it received is incomplete`);
    this.name = 'OutputError';
  }
}

/** Streams whose reader may go away without failing the command (see readerMayLeave). */
const mayLeave = new WeakSet<NodeJS.WritableStream>();
/** Errors of a write to a reader that is gone: it closed its end, or exited. */
const READER_GONE = new Set(['EPIPE', 'ECONNRESET', 'EOF', 'ERR_STREAM_DESTROYED']);

/**
 * Listens for the stream's errors, once: an EPIPE on stdout is then reported by the next write
 * (and at exit) instead of crashing the process with an unhandled 'error' event.
 */
export function guardOutput(stream: NodeJS.WritableStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on('error', (error: Error) => {
    if (mayLeave.has(stream) && READER_GONE.has(String((error as NodeJS.ErrnoException).code))) return;
    if (!failures.has(stream)) failures.set(stream, error);
  });
}

/**
 * For a command whose reader going away is normal (the stdio MCP server: a client that leaves
 * needs no more answers): its reader gone fails nothing, and the command exits as it would; any
 * other error of the stream still does.
 */
export function readerMayLeave(stream: NodeJS.WritableStream): void {
  guardOutput(stream);
  mayLeave.add(stream);
}

/** The error that stopped the stream, if one did. */
export function outputFailure(stream: NodeJS.WritableStream): OutputError | undefined {
  const error = failures.get(stream);
  return error ? new OutputError(error) : undefined;
}

/**
 * Writes `text`, and when the stream's buffer is full waits until it drains: what a command
 * streams (an export) is then held by the pipe, not piled up in memory. Rejects with an
 * OutputError once the stream failed or closed (the reader is gone).
 */
export async function writeOut(stream: NodeJS.WritableStream, text: string): Promise<void> {
  guardOutput(stream);
  const failed = outputFailure(stream);
  if (failed) throw failed;
  if ((stream as Writable).destroyed) throw new OutputError(new Error('the output was closed'));
  if (stream.write(text)) return;
  await new Promise<void>((resolve, reject) => {
    const finish = (error?: Error): void => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (error) reject(new OutputError(error));
      else resolve();
    };
    const onDrain = (): void => finish();
    const onError = (error: Error): void => finish(error);
    const onClose = (): void => finish(failures.get(stream) ?? new Error('the output was closed'));
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** Calls `done` once everything written to `stream` so far is flushed (or the stream is gone). */
function whenFlushed(stream: NodeJS.WritableStream, done: () => void): void {
  const s = stream as Writable;
  if (s.destroyed || s.writableEnded || failures.has(stream)) {
    done();
    return;
  }
  // Write callbacks run in order: this one runs once every earlier write reached the reader.
  stream.write('', () => done());
}

/**
 * Ends the CLI process with `code`, once stdout and stderr have flushed: process.exit() drops what
 * a pipe has not taken yet, and an explicit exit is still needed, as native handles (LanceDB,
 * worker threads) may linger after close. A run whose stdout failed (its reader gone) that would
 * have exited 0 says so on stderr and exits 1.
 */
export function exitWhenFlushed(code: number): void {
  const stdoutFailed = code === 0 ? outputFailure(process.stdout) : undefined;
  if (stdoutFailed) {
    process.stderr.write(`error: ${stdoutFailed.message}\n`);
    code = 1;
  }
  process.exitCode = code;
  let pending = 2;
  const done = (): void => {
    if (--pending === 0) process.exit(code);
  };
  whenFlushed(process.stdout, done);
  whenFlushed(process.stderr, done);
}
