import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { CaptureRecorder } from './recorder';

/** Focus shorter than this is a flick through editors, not reading. */
const MIN_READ_MS = 1000;
/** Bound on the lines remembered per unsaved document. */
const MAX_LINES = 500;

interface PendingEdit {
  folder: string;
  path: string;
  lines: Set<number>;
  changes: number;
}

/** Files read (focus and visibility, with time spent) and modified (edits, saves) in editors. */
export class EditorCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private focus: { uri: vscode.Uri; since: number } | undefined;
  private visible = new Set<string>();
  private readonly edits = new Map<string, PendingEdit>();

  constructor(private readonly recorder: CaptureRecorder) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => this.onActiveEditor(e)),
      vscode.window.onDidChangeVisibleTextEditors((e) => this.onVisibleEditors(e)),
      vscode.window.onDidChangeWindowState((s) => this.onWindowState(s)),
      vscode.workspace.onDidChangeTextDocument((e) => this.onChange(e)),
      vscode.workspace.onDidSaveTextDocument((d) => this.onSave(d)),
      vscode.workspace.onDidCloseTextDocument((d) => this.onClose(d)),
    );
    this.visible = new Set(vscode.window.visibleTextEditors.map((e) => e.document.uri.toString()));
    this.startFocus(vscode.window.activeTextEditor);
  }

  /** Records the focus period so far and unsaved edits, e.g. before a session ends. */
  checkpoint(): void {
    const t0 = performance.now();
    const editor = vscode.window.activeTextEditor;
    this.endFocus(t0);
    for (const [key, edit] of this.edits) this.emitEdit(key, edit, false, t0);
    this.startFocus(editor);
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
      if (this.visible.has(key) || editor === vscode.window.activeTextEditor || !this.recorder.active) continue;
      const at = this.recorder.locate(editor.document.uri);
      if (at) this.recorder.record({ kind: 'read', folder: at.folder, path: at.path, ms: 0, at: Date.now() }, t0);
    }
    this.visible = now;
  }

  private startFocus(editor: vscode.TextEditor | undefined): void {
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
    let edit = this.edits.get(key);
    if (!edit) {
      const at = this.recorder.locate(e.document.uri);
      if (!at) return;
      edit = { folder: at.folder, path: at.path, lines: new Set(), changes: 0 };
      this.edits.set(key, edit);
    }
    edit.changes += e.contentChanges.length;
    for (const change of e.contentChanges) {
      if (edit.lines.size >= MAX_LINES) break;
      const start = change.range.start.line;
      let inserted = 0;
      for (let i = change.text.indexOf('\n'); i !== -1; i = change.text.indexOf('\n', i + 1)) inserted++;
      const span = Math.max(inserted, change.range.end.line - start);
      for (let l = start; l <= start + span && edit.lines.size < MAX_LINES; l++) edit.lines.add(l);
    }
    this.recorder.account(t0);
  }

  private onSave(document: vscode.TextDocument): void {
    const t0 = performance.now();
    const key = document.uri.toString();
    const edit = this.edits.get(key);
    if (edit) this.emitEdit(key, edit, true, t0);
  }

  private onClose(document: vscode.TextDocument): void {
    const t0 = performance.now();
    const key = document.uri.toString();
    const edit = this.edits.get(key);
    // A document closed while dirty: its edits were abandoned or saved elsewhere; keep what happened.
    if (edit && document.isDirty) this.emitEdit(key, edit, false, t0);
    else this.edits.delete(key);
  }

  private emitEdit(key: string, edit: PendingEdit, saved: boolean, t0: number): void {
    this.edits.delete(key);
    if (!this.recorder.active) return;
    this.recorder.record(
      { kind: 'edit', folder: edit.folder, path: edit.path, uri: key, lines: [...edit.lines], changes: edit.changes, saved, at: Date.now() },
      t0,
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
