// What a command reads that the user named: a file (import's records, eval's questions) or a
// folder (a git repository). A path that names none is bad input (exit 2), found before a store
// opens, in the same words whichever command finds it.

import { accessSync, constants, statSync } from 'node:fs';
import { GitImportError } from '../core/capture/gitImport';
import { UsageError } from './options';

/** Refuses a path that names no file this process can read (missing, a folder, no rights); `hint` says what to give. */
export function checkInputFile(file: string, hint: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
    if (isFile) accessSync(file, constants.R_OK);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (!isFile) throw new UsageError(`${file} is not a file (${hint})`);
}

/** Refuses a path that names no folder, also one the system cannot look up (too long, a loop of links, no rights). */
export function checkInputFolder(dir: string, hint: string): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch (error) {
    throw new UsageError(`cannot read ${dir}: ${(error as NodeJS.ErrnoException).code ?? String(error)} (${hint})`);
  }
  if (!isFolder) throw new UsageError(`'${dir}' is not a folder: ${hint}`);
}

/** What git import refuses about the folder or revision given: bad input (exit 2), not a failure. */
const BAD_REPOSITORY = /^(Repository folder not found|Not a git repository|Revision not found)\b/;

/** A git import's error as the usage error it is (a folder that is no repository, a revision it lacks), else the error itself. */
export function gitInputError(error: unknown): unknown {
  return error instanceof GitImportError && BAD_REPOSITORY.test(error.message) ? new UsageError(error.message) : error;
}
