// The CLI's main() run in this process (no bundle, no child), with its output captured and
// environment variables set only for the call: for tests that check flags, help and errors.

import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main';

/** Runs `fn` with `env` set in process.env, then puts every variable back as it was. */
export function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  return fn().finally(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

/** `code-memory <args>` through main(), with `env` set for the call. */
export async function runMain(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await withEnv(env, () => main(args, { stdout, stderr, stdin: new PassThrough() }, new AbortController().signal));
  return { code, out, err };
}
