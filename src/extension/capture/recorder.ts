import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import type * as vscode from 'vscode';
import { workspaceRelativePath } from '../../core/capture/paths';
import type { CaptureEvent } from './events';

export interface Located {
  /** Workspace folder URI as a string. */
  folder: string;
  /**
   * Path with forward slashes, relative to the repository the folder is in (so two packages of a
   * monorepo opened as two folders, one project, do not both have a `src/index.ts`), else to the folder.
   */
  path: string;
}

/** What capture sources need: a cheap gate, a cheap locator, and a queue to push to. */
export interface CaptureRecorder {
  /** False while paused, disabled, or in an untrusted workspace: sources record nothing. */
  readonly active: boolean;
  locate(uri: vscode.Uri): Located | undefined;
  folderFor(uri: vscode.Uri | undefined): string | undefined;
  record(event: CaptureEvent, startedAt: number): void;
  /** Counts the cost of a handler that recorded nothing (yet), e.g. a keystroke. */
  account(startedAt: number): void;
}

// Paths that are never a developer's own reading or writing.
const NOISE = /(^|\/)(\.git|node_modules|\.vscode-test|\.DS_Store)(\/|$)/;

/** `uri`'s path inside `folder` with forward slashes (case-insensitively on Windows and macOS). */
export function relativePathIn(folder: vscode.WorkspaceFolder, uri: vscode.Uri): string | undefined {
  const rel = workspaceRelativePath(folder.uri.path, uri.path);
  if (rel === undefined || NOISE.test(rel)) return undefined;
  return rel;
}

/**
 * Where a local file really is when it is reached through a symbolic link (the file itself or a
 * folder above it), else undefined: also for a file that does not exist (any more). One call.
 */
export function linkTarget(file: string): string | undefined {
  try {
    const real = fs.realpathSync.native(file);
    return real !== file ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The root of the git repository a local folder is in, when that is above the folder (a package
 * of a monorepo opened on its own); undefined when the folder is the root or in no repository.
 * A `.git` folder or file (worktrees, submodules) marks a root. A few stat calls, once per folder.
 */
export function repositoryRootAbove(folder: string): string | undefined {
  let dir = nodePath.dirname(folder);
  if (fs.existsSync(nodePath.join(folder, '.git'))) return undefined;
  for (;;) {
    if (fs.existsSync(nodePath.join(dir, '.git'))) return dir;
    const parent = nodePath.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
