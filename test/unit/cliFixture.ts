// The CLI as users get it: its esbuild bundle, built from the current sources into out/ (one
// folder per test process, so that two runs never read each other's half-written bundle), run
// as a real child process.

import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { BuildOptions } from 'esbuild';
import { REPO_ROOT } from './mcpFixture';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** An esbuild bundle of product code for plain Node, as the build makes them (native and model packages stay external). */
export async function buildNodeBundle(options: BuildOptions): Promise<void> {
  await build({
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // apache-arrow must be the one LanceDB loads, or its record batches fail schema checks.
    external: ['vscode', '@lancedb/lancedb', 'apache-arrow', '@energetic-ai/*'],
    logLevel: 'error',
    ...options,
  });
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Another copy of cli.js to run (default: this bundle's). */
  cli?: string;
}

export class CliBundle {
  readonly dir: string;

  constructor(name: string) {
    this.dir = path.join(REPO_ROOT, 'out', name, String(process.pid));
  }

  get cli(): string {
    return path.join(this.dir, 'cli.js');
  }

  /** The bundles esbuild.config.mjs builds (cli.js, the commands bundle it loads, the embed worker). */
  async build(): Promise<void> {
    const { cliBundles } = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts/cliBundles.mjs')).href)) as { cliBundles(root: string, outdir: string): BuildOptions[] };
    for (const bundle of cliBundles(REPO_ROOT, this.dir)) await buildNodeBundle(bundle);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Starts `code-memory <args>` with the hashed embedder and no store or project from the environment. */
  spawn(args: string[], options: CliOptions = {}): ChildProcessWithoutNullStreams {
    return spawn(process.execPath, [options.cli ?? this.cli, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_EMBEDDER: 'hashed', CODE_MEMORY_STORE: '', CODE_MEMORY_PROJECT: '', ...options.env },
    });
  }

  /** Runs `code-memory <args>` to its end, with `input` on stdin. */
  run(args: string[], options: CliOptions & { input?: string } = {}): Promise<CliRun> {
    return new Promise((resolve, reject) => {
      const child = this.spawn(args, options);
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(options.input ?? '');
    });
  }
}
