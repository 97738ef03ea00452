// Raw capture events: what an event handler records in O(1) before anything else happens.
// Turning them into observations (symbols, commit messages, merging) happens later, in the
// queue's drain, off the editor's event path.

export interface EventBase {
  /** Workspace folder URI (string) the event belongs to; picks the project scope. */
  folder: string;
  at: number;
}

export interface ReadEvent extends EventBase {
  kind: 'read';
  path: string;
  /** Time the editor had focus; 0 when the file only became visible. */
  ms: number;
}

export interface EditEvent extends EventBase {
  kind: 'edit';
  path: string;
  uri: string;
  /** Zero-based line numbers touched, as of the save. */
  lines: number[];
  changes: number;
  saved: boolean;
}

export interface FileEvent extends EventBase {
  kind: 'create' | 'delete' | 'disk_change';
  path: string;
}

export interface RenameEvent extends EventBase {
  kind: 'rename';
  from: string;
  path: string;
}

export interface CommitEvent extends EventBase {
  kind: 'commit';
  sha: string;
  branch: string | null;
  repoRoot: string;
}

export interface CheckoutEvent extends EventBase {
  kind: 'checkout';
  from: string | null;
  branch: string | null;
  sha: string | null;
}

export interface TaskEvent extends EventBase {
  kind: 'task';
  name: string;
  source: string;
  group: string | null;
  exitCode: number | null;
}

export interface TerminalEvent extends EventBase {
  kind: 'terminal';
  command: string;
  cwd: string | null;
  exitCode: number | null;
}

export type CaptureEvent =
  | ReadEvent
  | EditEvent
  | FileEvent
  | RenameEvent
  | CommitEvent
  | CheckoutEvent
  | TaskEvent
  | TerminalEvent;

export type CaptureKind = CaptureEvent['kind'];
