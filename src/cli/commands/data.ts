// Writing and moving data: import-git, observe, export, import, forget.

import { importGitHistory } from '../../core/capture/gitImport';
import { createReadStream, fstatSync } from 'node:fs';
import * as path from 'node:path';
import type { ForgetRequest, ObservationInput } from '../../core/api';
import { UnwritableTargetError, writePrivateLines } from '../../core/privateFiles';
import { ImportFileError, MAX_IMPORT_LINE_BYTES } from '../../core/store/portability';
import type { ImportReport } from '../../core/store/portability';
import type { SourceKind } from '../../core/model/records';
import { describeIssues } from '../../core/tools/types';
import { observationInputSchema } from '../../core/tools/write';
import type { CommandImpl } from '../command';
import { UsageError, allProjects } from '../options';
import type { Io } from '../options';
import { openEngine, resolveScope, writeJson } from '../context';
import { removeDeadServerInfo } from './servers';
import { checkInputFile, checkInputFolder, gitInputError } from '../inputs';
import { boundedLines, LineNotUtf8Error, LineTooLongError } from '../lines';
import { writeOut } from '../output';

function progressBar(io: Io, label: string): (done: number, total: number) => void {
  const tty = Boolean((io.stderr as NodeJS.WriteStream).isTTY);
  let lastShown = -1;
  return (done, total) => {
    const pct = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 100;
    if (tty) {
      const width = 30;
      const fill = Math.round((pct / 100) * width);
      io.stderr.write(`\r${label} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${done}/${total} ${pct}%`);
      if (done >= total) io.stderr.write('\n');
    } else if (pct >= lastShown + 10 || done >= total) {
      // Logs and CI: one line per tenth instead of carriage returns.
      lastShown = pct - (pct % 10);
      io.stderr.write(`${label} ${done}/${total} (${pct}%)\n`);
    }
  };
}

export const importGitCommand: CommandImpl = {
  name: 'import-git',
  async run({ options, values, positionals, io, signal }) {
    // path.resolve('') is the current folder: an empty path (an unset shell variable) is no repository named.
    if (positionals[0] === '') throw new UsageError('the repository path is empty: give the path of a git repository');
    const repo = path.resolve(positionals[0] ?? options.cwd);
    checkInputFolder(repo, 'give the path of a git repository');
    const scope = await resolveScope(options, repo);
    const engine = await openEngine(options, io, true);
    const started = Date.now();
    try {
      const result = await importGitHistory(engine, repo, {
        scope,
        signal,
        rev: values.rev as string | undefined,
        includeMerges: Boolean(values.merges),
        onProgress: progressBar(io, 'commits'),
      });
      await engine.flush();
      const seconds = (Date.now() - started) / 1000;
      const report = { project: scope.project, repository: repo, ...result, seconds: Math.round(seconds * 10) / 10, commits_per_second: Math.round(((result.imported + result.skipped) / Math.max(seconds, 0.001)) * 10) / 10 };
      if (options.json) writeJson(io, report);
      else io.stdout.write(`Imported ${result.imported} commit(s) into '${scope.project}' (${result.skipped} already there, ${result.sessions} session(s)) in ${report.seconds} s.\n`);
      return 0;
    } catch (error) {
      throw gitInputError(error);
    } finally {
      await engine.close();
    }
  },
};

/**
 * The longest stdin line `observe` reads: more than the largest observation its input rules take
 * (some 1.3 million characters, each at most 12 bytes in JSON), as an import line is. A longer
 * line (a hook piping a binary) is refused as it streams in, never held whole.
 */
const MAX_OBSERVE_LINE_BYTES = 16 * 1024 * 1024;

/**
 * stdin's lines for `observe`, each at most MAX_OBSERVE_LINE_BYTES and UTF-8: a longer one, or
 * one that is not UTF-8, is a usage error naming its line.
 */
async function* observeLines(input: NodeJS.ReadableStream): AsyncGenerator<string> {
  try {
    yield* boundedLines(input, MAX_OBSERVE_LINE_BYTES);
  } catch (error) {
    if (error instanceof LineTooLongError) throw new UsageError(`nothing stored: line ${error.lineNo} is longer than ${MAX_OBSERVE_LINE_BYTES / 1024 / 1024} MiB, more than any observation holds (give one JSON object per line)`);
    if (error instanceof LineNotUtf8Error) throw new UsageError(`nothing stored: line ${error.lineNo} is not valid UTF-8 (give JSON lines in UTF-8)`);
    throw error;
  }
}

/**
 * stdin redirected from a folder (`< some/dir`) reads as empty in Node: observe would store
 * nothing and say so with exit 0, import would call it an empty file. Refused as bad input.
 * Only the process's own stdin is looked at (a command run in-process is given another stream).
 */
function checkStdinNotFolder(io: Io, hint: string): void {
  if (io.stdin !== process.stdin) return;
  let folder = false;
  try {
    folder = fstatSync(0).isDirectory();
  } catch {
    return; // no stdin to look at (closed): reading it says the rest
  }
  if (folder) throw new UsageError(`stdin is a folder: ${hint}`);
}

export const observeCommand: CommandImpl = {
  name: 'observe',
  async run({ options, io }) {
    checkStdinNotFolder(io, 'pipe or redirect JSON lines into observe, one observation per line');
    const inputs: ObservationInput[] = [];
    const problems: string[] = [];
    let lineNo = 0;
    if ((io.stdin as NodeJS.ReadStream).isTTY) io.stderr.write('Reading observations as JSON lines from stdin; end with Ctrl+D.\n');
    for await (const read of observeLines(io.stdin)) {
      lineNo++;
      // A file saved by some Windows editors starts with a BOM, which JSON.parse refuses.
      const line = lineNo === 1 ? read.replace(/^\uFEFF/, '') : read;
      if (!line.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        problems.push(`line ${lineNo}: not JSON`);
        continue;
      }
      const parsed = observationInputSchema.safeParse(value);
      if (parsed.success) inputs.push(parsed.data as ObservationInput);
      else problems.push(`line ${lineNo}: ${describeIssues(parsed.error)}`);
    }
    if (problems.length) {
      io.stderr.write(`error: nothing stored; fix these lines:\n${problems.slice(0, 20).map((p) => `  ${p}`).join('\n')}\n`);
      return 2;
    }
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, true);
    try {
      const ids: number[] = [];
      const written: number[] = [];
      // Every line passed the engine's own input rules above, so no chunk is refused after earlier
      // ones were stored; a chunk the store fails takes itself back, and what the chunks before it
      // wrote anew is forgotten here (never an observation stored before the run that a line's
      // dedupe key found), so that running the command again stores each line once.
      for (let i = 0; i < inputs.length; i += 500) {
        let out;
        try {
          out = await engine.observeReport(inputs.slice(i, i + 500), scope);
        } catch (error) {
          if (written.length > 0) {
            const kept = await engine.forget({ kind: 'observation', ids: written }, scope).then(
              () => 0,
              () => written.length,
            );
            if (kept > 0) io.stderr.write(`warning: the ${kept} observation(s) stored before the failure could not be taken back (ids ${written[0]} to ${written[written.length - 1]}): forget them (code-memory forget --ids ...) before running the same input again\n`);
          }
          throw error;
        }
        ids.push(...out.observations.map((o) => o.id));
        written.push(...out.written);
      }
      const stored = written.length;
      await engine.flush();
      if (options.json) writeJson(io, { project: scope.project, stored, ids });
      else io.stdout.write(`Stored ${stored} observation(s) in '${scope.project}'.\n`);
      return 0;
    } finally {
      await engine.close();
    }
  },
};

export const exportCommand: CommandImpl = {
  name: 'export',
  async run({ options, values, io }) {
    if (values.out === '') throw new UsageError('--out needs a file path (leave it out to export to stdout)');
    const scope = allProjects(values) ? null : await resolveScope(options);
    const engine = await openEngine(options, io, false);
    try {
      // To stdout, each line waits for a slow reader (writeOut) before the next is written.
      const n = values.out !== undefined
        ? await exportToFile(values.out as string, (write) => engine.exportJsonl(write, scope))
        : await engine.exportJsonl((line) => writeOut(io.stdout, line.endsWith('\n') ? line : `${line}\n`), scope);
      // With --out, stdout is free for the summary --json asks for; to stdout, the export is the output.
      if (options.json && values.out !== undefined) writeJson(io, { exported: n, ...(scope ? { project: scope.project } : {}), out: path.resolve(values.out as string) });
      else io.stderr.write(`Exported ${n} record(s)${scope ? ` of '${scope.project}'` : ''}.\n`);
      return 0;
    } finally {
      await engine.close();
    }
  },
};

/**
 * writePrivateLines to the path the user gave, whose errors name that path, not the temporary
 * file beside it that is renamed over it: a folder that does not exist is bad input (exit 2).
 */
async function exportToFile(file: string, produce: (write: (line: string) => void) => Promise<number>): Promise<number> {
  try {
    return await writePrivateLines(file, produce);
  } catch (error) {
    // A folder or a socket where the file should go is bad input.
    if (error instanceof UnwritableTargetError) throw new UsageError(error.message);
    const e = error as NodeJS.ErrnoException;
    // Only the errors of the file written (its temporary file is named after it).
    if (typeof e.path !== 'string' || !e.code || !e.path.startsWith(file)) throw error;
    const why = e.code === 'ENOENT' ? `the folder ${path.dirname(path.resolve(file))} does not exist` : e.code === 'EACCES' || e.code === 'EPERM' ? 'permission denied' : e.code === 'EISDIR' ? 'it is a folder' : e.code;
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR' || e.code === 'EISDIR') throw new UsageError(`cannot write ${file}: ${why}`);
    throw new Error(`cannot write ${file}: ${why}`);
  }
}

/**
 * The lines of the file to import, each at most MAX_IMPORT_LINE_BYTES and UTF-8 (as export writes
 * them): a longer one, or one that is not UTF-8, is refused with its line number as it is read.
 */
async function* importLines(input: NodeJS.ReadableStream): AsyncGenerator<string> {
  try {
    yield* boundedLines(input, MAX_IMPORT_LINE_BYTES);
  } catch (error) {
    if (error instanceof LineTooLongError) throw new ImportFileError(`Import line ${error.lineNo} is longer than ${MAX_IMPORT_LINE_BYTES / 1024 / 1024} MiB, more than any record holds; fix or remove it and import again (nothing was imported)`);
    if (error instanceof LineNotUtf8Error) throw new ImportFileError(`Import line ${error.lineNo} is not valid UTF-8, which an export always is; fix or remove it and import again (nothing was imported)`);
    throw error;
  }
}

export const importCommand: CommandImpl = {
  name: 'import',
  async run({ options, values, positionals, io }) {
    const file = positionals[0] ?? '-';
    // Checked before the store opens: a wrong path is a usage error, not a crash mid-import.
    if (file !== '-') checkInputFile(file, 'give a JSON Lines file, or - for stdin');
    else checkStdinNotFolder(io, 'pipe or redirect an export into import -, or give the file');
    const project = options.project;
    const engine = await openEngine(options, io, true);
    try {
      // A file is read twice (checked whole, then written); stdin is held in memory meanwhile. Lines
      // are read (each at most MAX_IMPORT_LINE_BYTES) only once the store is open and the import iterates them.
      const lines = file === '-' ? importLines(io.stdin) : () => importLines(createReadStream(file));
      let report: ImportReport = { imported: 0, already_there: 0, other_projects: 0 };
      // Records forgotten since the export are left out, unless --include-forgotten (a restore).
      await engine.importJsonl(lines, { project, includeForgotten: values['include-forgotten'] === true, onReport: (r) => (report = r) });
      await engine.flush();
      if (options.json) writeJson(io, project ? { project, ...report } : report);
      else {
        const others = project ? `, ${report.other_projects} of other projects left out` : '';
        const forgotten = report.forgotten ? `, ${report.forgotten} forgotten left out` : '';
        io.stdout.write(`Imported ${report.imported} record(s)${project ? ` of '${project}'` : ''} (${report.already_there} already there${others}${forgotten}).\n`);
      }
      return 0;
    } catch (error) {
      if (error instanceof Error && error.name === 'ImportFileError') throw new UsageError(error.message);
      throw error;
    } finally {
      await engine.close();
    }
  },
};

const KINDS: SourceKind[] = ['observation', 'session_summary', 'memory'];

export const forgetCommand: CommandImpl = {
  name: 'forget',
  async run({ options, values, io }) {
    const request: ForgetRequest = {};
    const modes = [values.ids !== undefined, Boolean(values['whole-project']), Boolean(values.all)].filter(Boolean).length;
    if (modes !== 1) {
      io.stderr.write('error: give exactly one of --ids, --whole-project or --all\n');
      return 2;
    }
    if (values.kind !== undefined && values.ids === undefined) throw new UsageError('--kind goes with --ids: --whole-project and --all forget every kind');
    if (values.all && (values.project !== undefined || values.branch !== undefined)) throw new UsageError('--all forgets every project of the store: give --whole-project with --project instead');
    if (values.ids !== undefined) {
      const kind = values.kind as SourceKind | undefined;
      if (!kind || !KINDS.includes(kind)) {
        io.stderr.write(`error: --ids needs --kind ${KINDS.join('|')}\n`);
        return 2;
      }
      const ids = String(values.ids).split(',').map((s) => s.trim());
      if (!ids.every((s) => /^\d+$/.test(s) && Number.isSafeInteger(Number(s)) && Number(s) > 0)) {
        io.stderr.write('error: --ids takes positive integers separated by commas\n');
        return 2;
      }
      request.kind = kind;
      request.ids = ids.map(Number);
    } else if (!values.yes) {
      io.stderr.write(`error: this deletes ${values.all ? 'everything in the store' : 'the whole project'}; add --yes to confirm\n`);
      return 2;
    }
    const scope = values.all ? null : await resolveScope(options);
    if (values['whole-project'] && scope) request.project = scope.project;
    if (values.all) request.all = true;
    const engine = await openEngine(options, io, false);
    try {
      const report = await engine.forget(request, scope);
      // A server of the project killed without its clean-up left its token file naming the project.
      if (request.project !== undefined || request.all) removeDeadServerInfo(options.store, request.all ? null : request.project!);
      if (options.json) writeJson(io, report);
      else io.stdout.write(`Forgot ${report.observations} observation(s), ${report.session_summaries} session summary(ies), ${report.memories} memory(ies), ${report.cells} cell(s).\n`);
      return 0;
    } finally {
      await engine.close();
    }
  },
};
