// Raw capture events: what an event handler records in O(1) before anything else happens.
// Turning them into observations (symbols, commit messages, merging) happens later, in the
// queue's drain, off the editor's event path.

export interface EventBase {
  /** Workspace folder URI (string) the event belongs to; picks the project scope. */
  folder: string;
  at: number;
  /** The folder's branch when the event was recorded (stamped by the recorder); null when detached or unknown. */
  branch?: string | null;
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
  /** Zero-based line numbers touched, as of the save (where the text could not be compared). */
  lines: number[];
  changes: number;
  saved: boolean;
  /** The file when the session first touched it, and now; null where unknown or too large. */
  before: string | null;
  after: string | null;
  /** Saves of this file in the session so far. */
  saves: number;
  /** Unsaved work an earlier event told of, now back to the file as the session found it (undone, reverted). */
  reverted?: boolean;
  /** Problems (errors and warnings) on the file when the session first touched it. */
  problemsBefore: string[];
  /** The editor's work on the file this event reports (one per file and session). */
  work?: number;
  /** The engine session `before` belongs to; undefined until an edit of this work was written. */
  session?: string;
  /** The text as of the work's previous edit event; undefined for its first. */
  recorded?: string | null;
  /** Set after the file was rewritten on disk in the session: the edit observation it starts. */
  part?: number;
}

export interface DebugEvent extends EventBase {
  kind: 'debug';
  name: string;
  type: string;
  /** A debug session started (false) or ended (true, with how long it ran). */
  ended: boolean;
  ms: number | null;
}

export interface FileEvent extends EventBase {
  kind: 'create' | 'delete' | 'disk_change';
  path: string;
  /** A file open in an editor, which reloaded it: not the watcher's echo of an editor's save. */
  reloaded?: boolean;
  /** For a reloaded file, the text before (where known) and after; null where unknown or too large. */
  before?: string | null;
  after?: string | null;
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
  /** HEAD before it moved to `sha`: a commit was made only where `sha`'s parent is this. */
  from?: string | null;
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
  /** The end of the task's terminal output (bounded), where shell integration reported it. */
  output: string | null;
}

export interface TerminalEvent extends EventBase {
  kind: 'terminal';
  command: string;
  cwd: string | null;
  exitCode: number | null;
  /** The end of the command's output (bounded), where shell integration reported it. */
  output: string | null;
}

export type CaptureEvent =
  | ReadEvent
  | EditEvent
  | FileEvent
  | RenameEvent
  | CommitEvent
  | CheckoutEvent
  | TaskEvent
  | TerminalEvent
  | DebugEvent;

export type CaptureKind = CaptureEvent['kind'];
