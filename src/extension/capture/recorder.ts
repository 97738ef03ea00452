import type * as vscode from 'vscode';
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

export function relativePathIn(folder: vscode.WorkspaceFolder, uri: vscode.Uri): string | undefined {
  const base = folder.uri.path.endsWith('/') ? folder.uri.path : `${folder.uri.path}/`;
  if (!uri.path.startsWith(base)) return undefined;
  const rel = uri.path.slice(base.length);
  if (rel === '' || NOISE.test(rel)) return undefined;
  return rel;
}
