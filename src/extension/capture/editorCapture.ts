import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { MAX_EDIT_FILE_CHARS } from '../../core/capture/editDiff';
import { redact } from '../../core/capture/redact';
import { clipRedacted } from '../../core/capture/redact';
import { readFileText } from './fileText';
import type { CaptureRecorder } from './recorder';
import type { SaveJournal } from './saveJournal';

/** Focus shorter than this is a flick through editors, not reading. */
const MIN_READ_MS = 1000;
/** Bound on the lines remembered per unsaved document. */
const MAX_LINES = 500;
/** Bound on the problems remembered per file. */
const MAX_PROBLEMS = 20;
/** Bound on a problem's message. */
const MAX_PROBLEM_CHARS = 200;
/** A problem's message read for redaction: past the cut, so that a secret the cut falls inside is seen whole; bounded, as this runs in an editor's change handler. */
const MAX_PROBLEM_READ = 4096;

/**
 * A file's work in the current session: its text when the session first touched it (read from
 * disk on the first change, which is the text before that change), saves, and what changed
 * since the last edit event. Kept until the session ends, so each save reports the whole change
 * of the session against that first state: one edit observation per file that grows.
 */
interface FileWork {
  /** Names this work in its events, so the writer can tell which work an event came from. */
  id: number;
  folder: string;
  path: string;
  uri: vscode.Uri;
  /** null when the file is not local or too large. */
  baseline: string | null;
  problemsBefore: string[];
  lines: Set<number>;
  changes: number;
  saves: number;
  /** Changed since the last edit event. */
  dirty: boolean;
  /** The text as of the last edit event (what the store holds), undefined before the first. */
  recorded?: string | null;
  /** The engine session the baseline belongs to, once an edit event of this work was written. */
  session?: string;
}

/**
 * Errors and warnings on a document, as short text with their line: each message redacted (its
 * first MAX_PROBLEM_READ characters, a secret may span its lines), then its first line cut.
 */
export function problemsOf(uri: vscode.Uri): string[] {
  const out: string[] = [];
  for (const d of vscode.languages.getDiagnostics(uri)) {
    if (d.severity > vscode.DiagnosticSeverity.Warning) continue;
    out.push(`${clipRedacted(redact(d.message.slice(0, MAX_PROBLEM_READ)).split('\n')[0], MAX_PROBLEM_CHARS)} (line ${d.range.start.line + 1})`);
    if (out.length >= MAX_PROBLEMS) break;
  }
  return out;
}

/** A local file as it is on disk now (which file, its size and time), undefined where it cannot be told. */
function fileStamp(uri: vscode.Uri): string | undefined {
  if (uri.scheme !== 'file') return undefined;
  try {
    const s = fs.statSync(uri.fsPath);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/** The text before a change: known, none (null), or still being decoded by VS Code. */
type Baseline = string | null | Promise<string | null>;

/** Files read (focus and visibility, with time spent) and modified (edits, saves) in editors. */
export class EditorCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private focus: { uri: vscode.Uri; since: number } | undefined;
  private visible = new Set<string>();
  private readonly work = new Map<string, FileWork>();
  private nextWorkId = 1;
  /**
   * Per document, how many times its work restarted within the session (after the file was
   * rewritten on disk): each start is its own edit observation, and keeps the one before.
   */
  private readonly parts = new Map<string, number>();
  /**
   * Per document, the file (its inode, size and time) when capture last knew the document to be
   * its text: when first seen, saved or reloaded. A document that becomes the file's text again
   * while the file is still that one was reverted (or undone), not reloaded from disk.
   */
  private readonly onDisk = new Map<string, string>();

  constructor(
    private readonly recorder: CaptureRecorder,
    /** Where this window's saves are noted for the other windows on the files (saveJournal.ts). */
    private readonly journal?: SaveJournal,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => this.onActiveEditor(e)),
      vscode.window.onDidChangeVisibleTextEditors((e) => this.onVisibleEditors(e)),
      vscode.window.onDidChangeWindowState((s) => this.onWindowState(s)),
      vscode.workspace.onDidChangeTextDocument((e) => this.onChange(e)),
      vscode.workspace.onDidSaveTextDocument((d) => this.onSave(d)),
      vscode.workspace.onDidCloseTextDocument((d) => this.onClose(d)),
      vscode.workspace.onDidRenameFiles((e) => this.onRename(e)),
    );
    this.visible = new Set(vscode.window.visibleTextEditors.map((e) => e.document.uri.toString()));
    for (const doc of vscode.workspace.textDocuments) this.noteOnDisk(doc.uri);
    this.startFocus(vscode.window.activeTextEditor);
  }

  /** Records the focus period so far and unsaved edits, e.g. before a session ends. */
  checkpoint(): void {
    const t0 = performance.now();
    const editor = vscode.window.activeTextEditor;
    this.endFocus(t0);
    for (const [key, work] of this.work) {
      if (!work.dirty) continue;
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
      this.emitEdit(work, doc, false, t0);
    }
    this.startFocus(editor);
  }

  /**
   * Capture became inactive (paused, untrusted, disabled): the baselines and the focus period
   * are dropped, so nothing typed or read until capture resumes can reach a later edit or read.
   */
  suspend(): void {
    this.work.clear();
    this.parts.clear();
    this.focus = undefined;
  }

  /**
   * Capture resumed: the focus timer restarts now, and documents with unsaved text start from
   * that text, so what was typed while inactive is never part of an edit.
   */
  resume(): void {
    this.work.clear();
    this.parts.clear();
    for (const doc of vscode.workspace.textDocuments) {
      // Saves and reloads while inactive were seen or not: the files as they are now.
      this.noteOnDisk(doc.uri);
      if (!doc.isDirty) continue;
      const at = this.recorder.locate(doc.uri);
      if (!at) continue;
      const text = doc.getText();
      const baseline = doc.uri.scheme === 'file' && text.length <= MAX_EDIT_FILE_CHARS ? text : null;
      this.work.set(doc.uri.toString(), this.newWork(at, doc.uri, baseline));
    }
    this.startFocus(vscode.window.activeTextEditor);
  }

  /**
   * The session of these folders (default: all) ended (or the branch switched): the next change
   * starts from the file as it is then. A document with unsaved text keeps its work, started
   * afresh from the file on disk now, so its next save is an edit of the new session.
   */
  resetSession(folders?: readonly string[]): void {
    this.restartWork((work) => !folders || folders.includes(work.folder));
  }

  /**
   * Edits of these works were not stored (captured before a forget of the project began, or
   * refused): their next change starts from the file as it is, as after a session's end.
   */
  restart(ids: ReadonlySet<number>): void {
    if (ids.size > 0) this.restartWork((work) => ids.has(work.id));
  }

  private restartWork(which: (work: FileWork) => boolean): void {
    for (const [key, work] of [...this.work]) {
      if (!which(work)) continue;
      this.work.delete(key);
      this.parts.delete(key);
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
      if (!doc?.isDirty) continue;
      const next = this.startWork(work, work.uri, this.readBaseline(work.uri, doc));
      this.work.set(key, Object.assign(next, { problemsBefore: work.problemsBefore, lines: work.lines, changes: work.changes, dirty: true }));
    }
  }

  /** The engine session an edit event of work `id` was written to. */
  noteSession(id: number, session: string): void {
    for (const work of this.work.values()) if (work.id === id) work.session ??= session;
  }

  /**
   * The session of work `id` ended without this window ending it (the engine ended it when idle,
   * or another window did): its baseline becomes `baseline`, the file as the ended session last
   * stored it, and it belongs to no session until its next edit is written. Returns the baseline
   * the work has now (rebased already by an earlier batch, it keeps that one).
   */
  rebase(id: number, ended: string, baseline: string | null): string | null {
    for (const work of this.work.values()) {
      if (work.id !== id) continue;
      if (work.session !== ended) return work.baseline;
      work.baseline = baseline;
      work.session = undefined;
      work.saves = 0;
      work.changes = 0;
    }
    return baseline;
  }

  private newWork(at: { folder: string; path: string }, uri: vscode.Uri, baseline: string | null): FileWork {
    return { id: this.nextWorkId++, folder: at.folder, path: at.path, uri, baseline, problemsBefore: problemsOf(uri), lines: new Set(), changes: 0, saves: 0, dirty: false };
  }

  /**
   * Work from `baseline`. One VS Code is still decoding (an encoding Node has no decoder for) is
   * filled in once decoded, unless an edit event of the work was written meanwhile: that event
   * told of no text before, and the next tells the same.
   */
  private startWork(at: { folder: string; path: string }, uri: vscode.Uri, baseline: Baseline): FileWork {
    const work = this.newWork(at, uri, baseline instanceof Promise ? null : baseline);
    if (baseline instanceof Promise) {
      void baseline.then((text) => {
        if (work.recorded === undefined && work.baseline === null) work.baseline = text;
      });
    }
    return work;
  }

  private onActiveEditor(editor: vscode.TextEditor | undefined): void {
    const t0 = performance.now();
    this.endFocus(t0);
    this.startFocus(editor);
  }

  private onWindowState(state: vscode.WindowState): void {
    const t0 = performance.now();
    if (!state.focused) this.endFocus(t0);
    else if (!this.focus) this.startFocus(vscode.window.activeTextEditor);
  }

  private onVisibleEditors(editors: readonly vscode.TextEditor[]): void {
    const t0 = performance.now();
    const now = new Set<string>();
    for (const editor of editors) {
      const key = editor.document.uri.toString();
      now.add(key);
      this.noteOnDisk(editor.document.uri, false);
      if (this.visible.has(key) || editor === vscode.window.activeTextEditor || !this.recorder.active) continue;
      const at = this.recorder.locate(editor.document.uri);
      if (at) this.recorder.record({ kind: 'read', folder: at.folder, path: at.path, ms: 0, at: Date.now() }, t0);
    }
    this.visible = now;
  }

  private startFocus(editor: vscode.TextEditor | undefined): void {
    if (editor) this.noteOnDisk(editor.document.uri, false);
    this.focus = editor && vscode.window.state.focused ? { uri: editor.document.uri, since: Date.now() } : undefined;
  }

  private endFocus(t0: number): void {
    const focus = this.focus;
    this.focus = undefined;
    if (!focus || !this.recorder.active) return;
    const ms = Date.now() - focus.since;
    if (ms < MIN_READ_MS) return;
    const at = this.recorder.locate(focus.uri);
    if (at) this.recorder.record({ kind: 'read', folder: at.folder, path: at.path, ms, at: focus.since }, t0);
  }

  private onChange(e: vscode.TextDocumentChangeEvent): void {
    if (e.contentChanges.length === 0 || !this.recorder.active) return;
    const t0 = performance.now();
    const key = e.document.uri.toString();
    // Typed in a document not seen before: the file is still the one it was loaded from.
    if (e.document.isDirty) this.noteOnDisk(e.document.uri, false);
    let work = this.work.get(key);
    if (this.isReload(e, work)) {
      this.onReload(e.document, work, t0);
      return;
    }
    if (!work) {
      const at = this.recorder.locate(e.document.uri);
      if (!at) return;
      work = this.startWork(at, e.document.uri, this.readBaseline(e.document.uri, e.document));
      this.work.set(key, work);
    }
    work.dirty = true;
    work.changes += e.contentChanges.length;
    for (const change of e.contentChanges) {
      if (work.lines.size >= MAX_LINES) break;
      const start = change.range.start.line;
      let inserted = 0;
      for (let i = change.text.indexOf('\n'); i !== -1; i = change.text.indexOf('\n', i + 1)) inserted++;
      const span = Math.max(inserted, change.range.end.line - start);
      for (let l = start; l <= start + span && work.lines.size < MAX_LINES; l++) work.lines.add(l);
    }
    this.recorder.account(t0);
  }

  /**
   * The editor reloaded the document because the file changed on disk (a formatter, a `git
   * checkout`): the document had nothing unsaved, is not dirty after the change, the change is no
   * undo or redo (those back to the saved text look the same), the file is another than when the
   * document was last loaded or saved (else it is "Revert File" of unsaved text: the document
   * went back to the file, which never changed), and the text is the file's (in the document's
   * encoding; one only VS Code decodes is not told here, and the change is taken as an edit).
   */
  private isReload(e: vscode.TextDocumentChangeEvent, work: FileWork | undefined): boolean {
    if (e.document.isDirty || e.reason !== undefined || work?.dirty || e.document.uri.scheme !== 'file') return false;
    const known = this.onDisk.get(e.document.uri.toString());
    if (known !== undefined && known === fileStamp(e.document.uri)) return false;
    try {
      if (fs.statSync(e.document.uri.fsPath).size > MAX_EDIT_FILE_CHARS) return false;
      // Told here and now, on every change of a clean document: not by VS Code, a moment later.
      const text = readFileText(e.document.uri.fsPath, e.document, false);
      return typeof text === 'string' && text === e.document.getText();
    } catch {
      return false;
    }
  }

  /**
   * Stored as what it is, a change on disk, with its diff where the text before is known (the
   * file as this session last recorded it). The edit observation so far is kept as it is; the
   * next change starts a new one from the file as it is now.
   */
  private onReload(document: vscode.TextDocument, work: FileWork | undefined, t0: number): void {
    const key = document.uri.toString();
    this.noteOnDisk(document.uri);
    const at = this.recorder.locate(document.uri);
    if (work) {
      this.work.delete(key);
      this.parts.set(key, (this.parts.get(key) ?? 0) + 1);
    }
    if (!at) return;
    const before = work ? (work.recorded !== undefined ? work.recorded : work.baseline) : null;
    const text = document.getText();
    const after = text.length <= MAX_EDIT_FILE_CHARS ? text : null;
    this.recorder.record({ kind: 'disk_change', folder: at.folder, path: at.path, reloaded: true, before, after, at: Date.now() }, t0);
  }

  private onRename(e: vscode.FileRenameEvent): void {
    for (const { oldUri, newUri } of e.files) {
      const from = oldUri.toString();
      const to = newUri.toString();
      for (const [key, work] of [...this.work]) {
        // The file itself, or a file in a renamed folder.
        if (key !== from && !key.startsWith(`${from}/`)) continue;
        this.work.delete(key);
        const part = this.parts.get(key);
        this.parts.delete(key);
        const uri = vscode.Uri.parse(to + key.slice(from.length));
        const at = this.recorder.locate(uri);
        // Moved out of the workspace, or to a name never captured: nothing more is recorded.
        if (!at) continue;
        const newKey = uri.toString();
        this.work.set(newKey, { ...work, folder: at.folder, path: at.path, uri });
        if (part !== undefined) this.parts.set(newKey, part);
      }
      for (const key of [...this.onDisk.keys()]) {
        if (key !== from && !key.startsWith(`${from}/`)) continue;
        this.onDisk.delete(key);
        // The renamed file is the same file (its inode, size and time): known at its new name.
        this.noteOnDisk(vscode.Uri.parse(to + key.slice(from.length)), false);
      }
    }
  }

  /** Notes the file of a document as it is now (`always` false: only where none is noted yet). */
  private noteOnDisk(uri: vscode.Uri, always = true): void {
    const key = uri.toString();
    if (!always && this.onDisk.has(key)) return;
    const stamp = fileStamp(uri);
    if (stamp === undefined) this.onDisk.delete(key);
    else this.onDisk.set(key, stamp);
  }

  /**
   * The file on disk at the first change is the text before it (the change is not saved yet).
   * Read at once, in the handler: a read that finished later could see the first save instead.
   * One small local read per file and session; remote, large or binary files get no content. The
   * bytes are decoded in the document's encoding (a Latin-1 file the editor opened as Latin-1),
   * so that the text before is what the editor showed, not a mis-decoding of it.
   */
  private readBaseline(uri: vscode.Uri, document?: vscode.TextDocument): Baseline {
    if (uri.scheme !== 'file') return null;
    try {
      if (fs.statSync(uri.fsPath).size > MAX_EDIT_FILE_CHARS) return null;
      return readFileText(uri.fsPath, document);
    } catch {
      // Not on disk yet: a new file starts empty.
      return '';
    }
  }

  private onSave(document: vscode.TextDocument): void {
    const t0 = performance.now();
    // Noted even while capture is inactive: a save made while paused is not another window's to store.
    if (document.uri.scheme === 'file') void this.journal?.noteSave(document.uri.fsPath);
    this.noteOnDisk(document.uri);
    const work = this.work.get(document.uri.toString());
    if (!work || !work.dirty) return;
    work.saves++;
    this.emitEdit(work, document, true, t0);
  }

  private onClose(document: vscode.TextDocument): void {
    const t0 = performance.now();
    const key = document.uri.toString();
    this.onDisk.delete(key);
    const work = this.work.get(key);
    // A document closed while dirty: its edits were abandoned or saved elsewhere; keep what happened.
    if (work?.dirty && document.isDirty) this.emitEdit(work, document, false, t0);
  }

  private emitEdit(work: FileWork, document: vscode.TextDocument | undefined, saved: boolean, t0: number): void {
    work.dirty = false;
    if (!this.recorder.active) return;
    const text = document?.getText();
    const recorded = work.recorded;
    // Typed after a save, then undone back to it: the document is clean and is what was last
    // recorded, so nothing is unsaved and nothing new happened.
    if (!saved && document !== undefined && !document.isDirty && text === recorded) return;
    // Back to where the session started (typed, then undone or reverted; or changed back by hand
    // and saved): nothing to say, unless an earlier event told of other text; the observation then
    // tells what was tried (the text that event recorded) as reverted. Unsaved text back to the
    // start after a save is not the file's state (the save is): nothing to say either.
    const reverted = text !== undefined && text === work.baseline;
    if (reverted && (recorded === undefined || recorded === work.baseline || (!saved && work.saves > 0))) return;
    const after = text !== undefined && text.length <= MAX_EDIT_FILE_CHARS ? text : null;
    work.recorded = after;
    const part = this.parts.get(work.uri.toString());
    this.recorder.record(
      {
        kind: 'edit',
        folder: work.folder,
        path: work.path,
        uri: work.uri.toString(),
        lines: [...work.lines],
        changes: work.changes,
        saved,
        before: work.baseline,
        after: reverted ? (recorded ?? null) : after,
        saves: work.saves,
        ...(reverted ? { reverted } : {}),
        problemsBefore: work.problemsBefore,
        work: work.id,
        session: work.session,
        recorded,
        part,
        at: Date.now(),
      },
      t0,
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
