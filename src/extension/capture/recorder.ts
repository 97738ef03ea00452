import type * as vscode from 'vscode';
import { workspaceRelativePath } from '../../core/capture/paths';
import type { CaptureEvent } from './events';

export interface Located {
  /** Workspace folder URI as a string. */
  folder: string;
  /** Workspace-relative path with forward slashes. */
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
