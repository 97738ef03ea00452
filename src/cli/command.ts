// The shape of one `code-memory` subcommand.

import type { GlobalOptions, Io } from './context';

export type OptionSpec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean; description: string; valueName?: string };

export interface CommandRun {
  options: GlobalOptions;
  values: Record<string, unknown>;
  positionals: string[];
  io: Io;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Extra paragraphs for --help. */
  details?: string;
  options: Record<string, OptionSpec>;
  /** Resolves to the exit code. */
  run(run: CommandRun): Promise<number>;
}
