import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { CaptureRecorder } from './recorder';

/**
 * Files created, deleted, renamed and changed, including by other processes (a watcher);
 * renames done in the editor arrive as rename events as well.
 */
export class FileCapture implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly recorder: CaptureRecorder) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/*');
    this.disposables.push(
      watcher,
      watcher.onDidCreate((uri) => this.onFile('create', uri)),
      watcher.onDidDelete((uri) => this.onFile('delete', uri)),
      watcher.onDidChange((uri) => this.onDiskChange(uri)),
      vscode.workspace.onDidRenameFiles((e) => this.onRename(e)),
    );
  }

  private onFile(kind: 'create' | 'delete', uri: vscode.Uri): void {
    const t0 = performance.now();
    if (!this.recorder.active) return;
    const at = this.recorder.locate(uri);
    if (at) this.recorder.record({ kind, folder: at.folder, path: at.path, at: Date.now() }, t0);
  }

  private onDiskChange(uri: vscode.Uri): void {
    const t0 = performance.now();
    if (!this.recorder.active) return;
    // Saves from an editor are captured as edits; only changes by other processes count here.
    const key = uri.toString();
    if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === key)) return;
    const at = this.recorder.locate(uri);
    if (at) this.recorder.record({ kind: 'disk_change', folder: at.folder, path: at.path, at: Date.now() }, t0);
  }

  private onRename(e: vscode.FileRenameEvent): void {
    const t0 = performance.now();
    if (!this.recorder.active) return;
    for (const { oldUri, newUri } of e.files) {
      const from = this.recorder.locate(oldUri);
      const to = this.recorder.locate(newUri);
      if (from && to) this.recorder.record({ kind: 'rename', folder: to.folder, from: from.path, path: to.path, at: Date.now() }, t0);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
