// The shape of one `code-memory` subcommand, in two halves: what `--help` and argument parsing
// need (the spec, in commands/specs.ts, loaded on every start) and what running it needs (the
// implementation, in the lazily loaded commands bundle).

import type { GlobalOptions, Io } from './options';

export type OptionSpec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean; description: string; valueName?: string };

export interface CommandRun {
  options: GlobalOptions;
  values: Record<string, unknown>;
  positionals: string[];
  io: Io;
  /** Aborted on SIGINT, SIGTERM or SIGHUP. */
  signal: AbortSignal;
}

export interface CommandSpec {
  name: string;
  summary: string;
  usage: string;
  /** Extra paragraphs for --help. */
  details?: string;
  options: Record<string, OptionSpec>;
  /** How many positional arguments it takes (none unless said; `Infinity` for free text). */
  positionals?: number;
  /**
   * Whether --branch means something to it: it narrows what the command reads, or is the branch
   * of what it writes. A command without it reads or deletes the whole project whatever the
   * branch, so it refuses --branch (exit 2) rather than ignore it unseen.
   */
  branch?: true;
}

export interface CommandImpl {
  /** The name of its spec. */
  name: string;
  /** Resolves to the exit code. */
  run(run: CommandRun): Promise<number>;
}
