// `code-memory`: the command-line entry point (bundled to dist/cli.js). The composition root
// of the CLI: parses arguments, picks the subcommand, opens what it needs, maps errors to exit codes.
// It starts on command specs alone (names, help, flags) and loads the implementations (the
// engine, LanceDB, MCP: dist/cliCommands.js) only when a command runs, so `--help` is instant.

import { parseArgs } from 'node:util';
import type { CommandImpl, CommandSpec, OptionSpec } from './command';
import { COMMAND_SPECS } from './commands/specs';
import { UsageError, errorMessage, fullDiskAdvice, globalOptionsFrom, isUsageError, leftStored, looksDamaged, looksLikeFullDisk } from './options';
import type { Io } from './options';
import { exitWhenFlushed, guardOutput } from './output';
import { PRODUCT_VERSION } from '../core/version';

/** The commands --branch means something to (see CommandSpec.branch), as --help names them. */
const BRANCH_COMMANDS = COMMAND_SPECS.filter((c) => c.branch).map((c) => c.name).join(', ');

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  store: { type: 'string', description: 'Store location: a folder (a leading ~ is your home folder) or its file:/// URI, or an s3:// / gs:// / az:// URI (default: $CODE_MEMORY_STORE or ~/.code-memory/store, shared with the VS Code extension)', valueName: 'uri' },
  'team-store': { type: 'string', description: 'A team store shared with others: s3://bucket/prefix, gs://, az:// or a folder, where a leading ~ is your home folder (default: $CODE_MEMORY_TEAM_STORE); searches read it too', valueName: 'uri' },
  project: { type: 'string', description: "Project scope (default: $CODE_MEMORY_PROJECT, else the current folder's git remote, e.g. github.com/owner/repo, else its name made unique, e.g. app-3f2a9c1b07de)", valueName: 'name' },
  branch: { type: 'string', description: `Narrow the scope to one branch (with what holds on every branch: no branch, main, master, trunk, the default branch); the branch of what observe and import-git write. Only ${BRANCH_COMMANDS} take it`, valueName: 'name' },
  embedder: { type: 'string', description: 'use-lite (default, offline model, held once per machine user by a shared model host; $CODE_MEMORY_SHARED_MODEL=0 keeps it in this process), hashed (fast, weaker), openai (an OpenAI-compatible /embeddings server such as Ollama, see --embedding-*) or none (full text only); or $CODE_MEMORY_EMBEDDER', valueName: 'name' },
  'embedding-endpoint': { type: 'string', description: 'With --embedder openai: the server\'s base URL (default: $CODE_MEMORY_EMBEDDING_ENDPOINT or http://127.0.0.1:11434/v1, Ollama; API key from $CODE_MEMORY_EMBEDDING_API_KEY)', valueName: 'url' },
  'embedding-model': { type: 'string', description: 'With --embedder openai: the model (default: $CODE_MEMORY_EMBEDDING_MODEL or nomic-embed-text)', valueName: 'name' },
  'request-log-days': { type: 'string', description: 'Keep retrieve_memory requests in the request log this many days, 1 to 36500 (default: $CODE_MEMORY_REQUEST_LOG_DAYS or 30)', valueName: 'n' },
  'request-log-max-rows': { type: 'string', description: 'Keep at most this many request log entries per project, the newest, 1 to 10000000 (default: $CODE_MEMORY_REQUEST_LOG_MAX_ROWS or 10000)', valueName: 'n' },
  'session-idle-minutes': { type: 'string', description: 'Summarise a session after this many minutes without activity, at least 1 (a fraction such as 2.5 too), as the extension\'s codeMemory.session.idleMinutes setting does (default: $CODE_MEMORY_SESSION_IDLE_MINUTES or 30)', valueName: 'n' },
  json: { type: 'boolean', description: 'Machine-readable output' },
  help: { type: 'boolean', short: 'h', description: 'Show help' },
};

/**
 * The implementation of a command. The build turns this require into one of the separate bundle
 * dist/cliCommands.js (`lazyCommandsBundle` in scripts/cliBundles.mjs); run from sources (tsx)
 * it loads the TypeScript module. A require, not import(): tsx's CommonJS hook leaves import()
 * to Node's ESM loader, which cannot resolve an extensionless .ts path.
 */
function implementationOf(spec: CommandSpec): CommandImpl {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when a command runs
  const { COMMAND_IMPLS } = require('./commands/implementations') as typeof import('./commands/implementations');
  const impl = COMMAND_IMPLS.find((c) => c.name === spec.name);
  if (!impl) throw new Error(`internal: command '${spec.name}' has no implementation`);
  return impl;
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  return Object.entries(options).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` <${spec.valueName ?? 'value'}>` : ''}`;
    return `  ${flag.padEnd(28)} ${spec.description}`;
  });
}

export function mainHelp(): string {
  return [
    'code-memory: a local memory engine for coding agents',
    '',
    'Usage: code-memory <command> [options]',
    '       code-memory help | --help | -h     this help',
    '       code-memory --version | -v         the version',
    '',
    'Commands:',
    ...COMMAND_SPECS.map((c) => `  ${c.name.padEnd(12)} ${c.summary}`),
    '',
    'Options (every command):',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Run `code-memory <command> --help` for a command\'s options.',
  ].join('\n');
}

export function commandHelp(command: CommandSpec): string {
  const lines = [`${command.summary}`, '', `Usage: ${command.usage}`];
  if (command.details) lines.push('', command.details);
  if (Object.keys(command.options).length) lines.push('', 'Options:', ...optionLines(command.options));
  lines.push('', 'Options (every command):', ...optionLines(GLOBAL_OPTIONS));
  return lines.join('\n');
}

/**
 * A value flag given twice (`--project a --project b`, `--ids 1 --ids 2`) is refused: parseArgs
 * keeps the last and drops the first unseen, so a command would run on half of what was asked.
 * Only flags declared `multiple` (search's --layer) take several; a flag without a value said
 * twice says the same thing twice.
 */
function refuseRepeatedValues(tokens: Array<{ kind: string; name?: string }>, specs: Record<string, OptionSpec>): void {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || !token.name) continue;
    const spec = specs[token.name];
    if (!spec || spec.type !== 'string' || spec.multiple) continue;
    if (seen.has(token.name)) throw new Error(`--${token.name} is given more than once: give it once`);
    seen.add(token.name);
  }
}

/**
 * `--opt -5` as `--opt=-5` for every option that takes a value: parseArgs refuses a value that
 * starts with '-' as ambiguous, which hid the option's own rule (`--limit must be an integer from
 * 1 to 200`) that `--limit=-5` gets. Only a negative number is joined; anything else after `--opt`
 * is left to parseArgs, as is everything after `--`.
 */
function joinNegativeValues(args: string[], specs: Record<string, OptionSpec>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') return [...out, ...args.slice(i)];
    const takesValue = arg.startsWith('--') && !arg.includes('=') && specs[arg.slice(2)]?.type === 'string';
    if (takesValue && i + 1 < args.length && /^-\.?[0-9]/.test(args[i + 1])) {
      out.push(`${arg}=${args[i + 1]}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

export async function main(argv: string[], io: Io, signal: AbortSignal): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${mainHelp()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${PRODUCT_VERSION}\n`);
    return 0;
  }
  const command = COMMAND_SPECS.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`error: unknown command '${name}'\n\n${mainHelp()}\n`);
    return 2;
  }
  const specs = { ...GLOBAL_OPTIONS, ...command.options };
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(rest, specs),
      options: Object.fromEntries(Object.entries(specs).map(([k, s]) => [k, { type: s.type, ...(s.short ? { short: s.short } : {}), ...(s.multiple ? { multiple: true } : {}) }])),
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    refuseRepeatedValues(parsed.tokens, specs);
  } catch (error) {
    io.stderr.write(`error: ${errorMessage(error)}\n\n${commandHelp(command)}\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  const extra = parsed.positionals.slice(command.positionals ?? 0);
  if (extra.length > 0) {
    io.stderr.write(`error: unexpected argument '${extra[0]}'\n\n${commandHelp(command)}\n`);
    return 2;
  }
  try {
    const options = globalOptionsFrom(parsed.values as Record<string, unknown>);
    if (options.branch !== undefined && !command.branch) {
      throw new UsageError(`${command.name} does not take --branch: what it reads, writes or deletes is not narrowed to a branch (only ${BRANCH_COMMANDS} take it); give it without --branch`);
    }
    const impl = implementationOf(command);
    return await impl.run({ options, values: parsed.values as Record<string, unknown>, positionals: parsed.positionals, io, signal });
  } catch (error) {
    // A value the store refuses (a project name too long, a filter holding NUL) is bad input too.
    if (isUsageError(error) || (error instanceof Error && error.name === 'FilterError')) {
      io.stderr.write(`error: ${error.message}\n`);
      return 2;
    }
    const message = errorMessage(error);
    io.stderr.write(`error: ${message}\n`);
    if (looksLikeFullDisk(message)) io.stderr.write(`The disk is full: ${fullDiskAdvice(error)}.\n`);
    else {
      // Whatever else failed (an object store that stopped answering, say): what the write left stored.
      const note = leftStored(error);
      if (note) io.stderr.write(`${note[0].toUpperCase()}${note.slice(1)}.\n`);
      if (looksDamaged(message)) io.stderr.write(`The store's files look damaged: \`code-memory doctor\` with the same --store says which table, and how to recover.\n`);
    }
    if (process.env.CODE_MEMORY_DEBUG) io.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
    return 1;
  }
}

if (require.main === module) {
  process.env.LANCEDB_LOG ??= 'error';
  const controller = new AbortController();
  const stop = (): void => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  // SIGHUP: the terminal closed. Node's default ends the process at once, skipping what a
  // command does when it stops (serve removes its token file; mcp and serve close the store).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  // An EPIPE on stdout (its reader gone) is reported by the command's next write and at exit.
  guardOutput(process.stdout);
  guardOutput(process.stderr);
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }, controller.signal).then(
    (code) => exitWhenFlushed(code),
    (error: unknown) => {
      process.stderr.write(`error: ${errorMessage(error)}\n`);
      exitWhenFlushed(1);
    },
  );
}
