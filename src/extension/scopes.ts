import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { gitConfigFile } from '../core/capture/gitConfig';
import type { Scope } from '../core/model/records';

/**
 * Project scope per workspace folder (git remote, else folder name and identity), computed with
 * the engine's own rule so that the CLI and the extension agree on project names: once per folder,
 * and again when the window's folders change or the repository's git config does (a remote set
 * to another URL names another project, as the CLI run there then says).
 */
export class ScopeService implements vscode.Disposable {
  private readonly cache = new Map<string, Promise<Scope>>();
  /** The git config file each folder's scope was computed with, and how it stood then (see configStamp). */
  private readonly configs = new Map<string, { file: string | null; stamp: string }>();
  private readonly subscription: vscode.Disposable;
  /**
   * The folder (URI string) the user last picked for what lies in no folder (resolve, choose):
   * the window's project for callers that keep asking the same question (the chat tools). Only
   * ever a folder the user picked; forgotten when the window's folders change.
   */
  private chosen: string | undefined;
  private readonly _onDidChangeProjects = new vscode.EventEmitter<void>();
  /**
   * The projects of the window's folders may have changed: its folders did (added, removed,
   * replaced), or a folder's git config did. Fired once what was known of them is forgotten, so
   * that scopeFor computes them again.
   */
  readonly onDidChangeProjects = this._onDidChangeProjects.event;

  /** `rule`: a folder's scope (the engine's rule, loaded when first needed). */
  constructor(private readonly rule: (uri: vscode.Uri) => Promise<Scope> = computeScope) {
    this.subscription = vscode.workspace.onDidChangeWorkspaceFolders(() => {
      this.cache.clear();
      this.configs.clear();
      this.chosen = undefined;
      this._onDidChangeProjects.fire();
    });
  }

  folders(): readonly vscode.WorkspaceFolder[] {
    return vscode.workspace.workspaceFolders ?? [];
  }

  /**
   * `folder` is a workspace folder URI string (as capture events carry it). Each call looks at
   * the repository's git config (one stat): once it changed, the scope is computed again and
   * onDidChangeProjects fires. The folder's config file is found once.
   */
  scopeFor(folder: string): Promise<Scope> {
    const config = this.configs.get(folder);
    const known = this.cache.get(folder);
    const file = config ? config.file : fileConfig(folder);
    const stamp = configStamp(file);
    if (known && config?.stamp === stamp) return known;
    const scope = this.rule(vscode.Uri.parse(folder));
    this.cache.set(folder, scope);
    this.configs.set(folder, { file, stamp });
    if (known) this._onDidChangeProjects.fire();
    return scope;
  }

  /** The scope of the active editor's folder, else of the first folder; null without a folder. */
  async current(): Promise<Scope | null> {
    const folder = this.currentFolder();
    return folder ? this.scopeFor(folder.uri.toString()) : null;
  }

  currentFolder(): vscode.WorkspaceFolder | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    return (active && this.folderOf(active)) || this.folders()[0];
  }

  /**
   * The folder a document lies in, also for a view of a file that is not the file itself: the
   * git diff's `git:` side, a `vscode-local-history:` copy carry the file's path. Undefined for a
   * buffer of no folder (untitled, a file outside the workspace).
   */
  folderOf(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (folder || uri.scheme === 'file' || uri.scheme === 'untitled') return folder;
    return vscode.workspace.getWorkspaceFolder(uri.with({ scheme: 'file', query: '', fragment: '' }));
  }

  /**
   * The project a command on `uri` (or on nothing) is about: its folder's; in a window of one
   * project, that one; else the user picks the folder, since guessing would show or file one
   * project's memory under another. Undefined without a folder, or when the pick is dismissed.
   *
   * The folder picked is kept for the window (until its folders change, or the user picks
   * another): with `reuse`, a caller on nothing in a folder gets it without being asked again
   * (the chat tools, called many times a conversation); without, the user is asked each time
   * (a command run on an untitled buffer), and the answer becomes the window's choice.
   */
  async resolve(uri: vscode.Uri | undefined, question: string, options: { reuse?: boolean } = {}): Promise<{ folder: vscode.WorkspaceFolder; scope: Scope } | undefined> {
    const known = await this.known(uri);
    if (known) return known;
    if (this.folders().length === 0) return undefined;
    if (options.reuse) {
      const all = await this.all();
      const kept = this.chosen === undefined ? undefined : all.find((a) => a.folder.uri.toString() === this.chosen);
      if (kept) return kept;
    }
    return this.choose(question);
  }

  /**
   * The project a command on `uri` (or on nothing) is about without asking: its folder's, or the
   * window's only project's. Undefined where resolve would ask.
   */
  async known(uri: vscode.Uri | undefined): Promise<{ folder: vscode.WorkspaceFolder; scope: Scope } | undefined> {
    const folder = uri && this.folderOf(uri);
    if (folder) return { folder, scope: await this.scopeFor(folder.uri.toString()) };
    const all = await this.all();
    return all.length > 0 && new Set(all.map((a) => a.scope.project)).size === 1 ? all[0] : undefined;
  }

  /**
   * Asks which folder's project work in no folder is about, and keeps the answer as the window's
   * choice (see resolve). A dismissed pick leaves the choice as it was. Undefined without a folder,
   * or when dismissed.
   */
  async choose(question: string): Promise<{ folder: vscode.WorkspaceFolder; scope: Scope } | undefined> {
    if (this.folders().length === 0) return undefined;
    const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: question, ignoreFocusOut: true });
    if (!picked) return undefined;
    this.chosen = picked.uri.toString();
    return { folder: picked, scope: await this.scopeFor(this.chosen) };
  }

  async all(): Promise<{ folder: vscode.WorkspaceFolder; scope: Scope }[]> {
    return Promise.all(this.folders().map(async (folder) => ({ folder, scope: await this.scopeFor(folder.uri.toString()) })));
  }

  dispose(): void {
    this.subscription.dispose();
    this._onDidChangeProjects.dispose();
  }
}

/** The git config file of a `file:` folder (URI string), null for any other. */
function fileConfig(folder: string): string | null {
  const uri = vscode.Uri.parse(folder);
  return uri.scheme === 'file' ? gitConfigFile(uri.fsPath) : null;
}

/** How a config file stands: git writes it anew (a lock file renamed over it) at each change. */
function configStamp(file: string | null): string {
  if (!file) return '';
  try {
    const s = fs.statSync(file);
    return `${s.ino}:${s.mtimeMs}:${s.size}`;
  } catch {
    return 'none';
  }
}

async function computeScope(uri: vscode.Uri): Promise<Scope> {
  const { folderProject, localProjectName, virtualProjectName } = await import('../core/capture/project');
  if (uri.scheme !== 'file') return { project: virtualProjectName(path.posix.basename(uri.path), uri.toString()) };
  try {
    const { project, defaultBranch } = await folderProject(uri.fsPath);
    return defaultBranch ? { project, defaultBranch } : { project };
  } catch {
    return { project: localProjectName(uri.fsPath) };
  }
}
