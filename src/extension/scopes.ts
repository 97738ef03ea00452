import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Scope } from '../core/model/records';

/**
 * Project scope per workspace folder (git remote, else folder name and identity), computed once per folder
 * with the engine's own rule so that the CLI and the extension agree on project names.
 */
export class ScopeService implements vscode.Disposable {
  private readonly cache = new Map<string, Promise<Scope>>();
  private readonly subscription: vscode.Disposable;

  constructor() {
    this.subscription = vscode.workspace.onDidChangeWorkspaceFolders(() => this.cache.clear());
  }

  folders(): readonly vscode.WorkspaceFolder[] {
    return vscode.workspace.workspaceFolders ?? [];
  }

  /** `folder` is a workspace folder URI string (as capture events carry it). */
  scopeFor(folder: string): Promise<Scope> {
    let scope = this.cache.get(folder);
    if (!scope) {
      scope = computeScope(vscode.Uri.parse(folder));
      this.cache.set(folder, scope);
    }
    return scope;
  }

  /** The scope of the active editor's folder, else of the first folder; null without a folder. */
  async current(): Promise<Scope | null> {
    const folder = this.currentFolder();
    return folder ? this.scopeFor(folder.uri.toString()) : null;
  }

  currentFolder(): vscode.WorkspaceFolder | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    return (active && vscode.workspace.getWorkspaceFolder(active)) || this.folders()[0];
  }

  async all(): Promise<{ folder: vscode.WorkspaceFolder; scope: Scope }[]> {
    return Promise.all(this.folders().map(async (folder) => ({ folder, scope: await this.scopeFor(folder.uri.toString()) })));
  }

  dispose(): void {
    this.subscription.dispose();
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
