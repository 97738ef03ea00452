import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import type { ScopeService } from '../scopes';
import type { GitApi, GitExtension } from '../capture/gitApi';
import { isSameOrInside } from '../../core/capture/paths';
import { GitUnavailableError, runGit } from '../../core/capture/gitProcess';

/** A commit id as records hold it: hex, abbreviated (4+) or whole (SHA-1, SHA-256). */
const COMMIT_ID = /^[0-9a-f]{4,64}$/i;

/** What the panels' links do: open a workspace file, open a commit. */
export class Navigation {
  constructor(private readonly scopes: ScopeService) {}

  /** The workspace folder of a project (its files' paths are relative to it). */
  async folderOf(project: string | undefined): Promise<vscode.WorkspaceFolder | undefined> {
    const all = await this.scopes.all();
    return all.find((a) => a.scope.project === project)?.folder ?? this.scopes.currentFolder();
  }

  async openFile(relativePath: string, project?: string, line?: number): Promise<void> {
    const folder = await this.folderOf(project);
    if (!folder) {
      void vscode.window.showWarningMessage(`Open the folder of ${project ?? 'this project'} to open ${relativePath}.`);
      return;
    }
    const uri = vscode.Uri.joinPath(folder.uri, ...relativePath.split('/'));
    // A stored path is what an agent reported: '../' or an absolute path must not open what lies outside the folder.
    if (!isSameOrInside(folder.uri.fsPath, uri.fsPath)) {
      void vscode.window.showWarningMessage(`${relativePath} is outside ${folder.name}: not opened.`);
      return;
    }
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      void vscode.window.showWarningMessage(`${relativePath} no longer exists in ${folder.name}.`);
      return;
    }
    const selection = line !== undefined ? new vscode.Range(line, 0, line, 0) : undefined;
    await vscode.window.showTextDocument(uri, { preview: true, selection });
  }

  /**
   * Opens a commit as a multi-file diff through the Git extension's git: URIs; where the Git
   * extension cannot, shows `git show` in a diff document.
   */
  async openCommit(sha: string, project?: string): Promise<void> {
    // A page posts the SHA: one that is no commit id (`--output=…`, an option of git show and
    // diff-tree) never reaches git.
    if (!COMMIT_ID.test(sha)) {
      void vscode.window.showWarningMessage(`Not a commit id: ${JSON.stringify(sha.slice(0, 80))}`);
      return;
    }
    const folder = await this.folderOf(project);
    if (!folder) {
      void vscode.window.showWarningMessage(`Open the folder of ${project ?? 'this project'} to see commit ${sha.slice(0, 8)}.`);
      return;
    }
    const dir = folder.uri.fsPath;
    let subject = '';
    let changes: { status: string; path: string }[] = [];
    let root = dir;
    try {
      root = (await runGit(dir, ['rev-parse', '--show-toplevel'])).trim();
      subject = (await runGit(dir, ['show', '-s', '--format=%s', sha])).trim();
      changes = (await runGit(dir, ['diff-tree', '--no-commit-id', '--name-status', '-r', '--root', sha]))
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [status, ...rest] = l.split('\t');
          return { status, path: rest[rest.length - 1] };
        });
    } catch (e) {
      // No git, or the folder gone: that is the reason, not the commit.
      const cannot = e instanceof GitUnavailableError || !existsSync(dir);
      void vscode.window.showWarningMessage(cannot ? `Cannot open commit ${sha.slice(0, 8)}: ${(e as Error).message}` : `Commit ${sha.slice(0, 8)} is not in the repository of ${folder.name} (maybe it was never fetched here).`);
      return;
    }
    const api = this.gitApi();
    if (api && changes.length > 0) {
      const rootUri = vscode.Uri.file(root);
      const resources = changes.map(({ status, path }) => {
        const uri = vscode.Uri.joinPath(rootUri, ...path.split('/'));
        const left = status.startsWith('A') ? undefined : api.toGitUri(uri, `${sha}~1`);
        const right = status.startsWith('D') ? undefined : api.toGitUri(uri, sha);
        return [uri, left, right];
      });
      try {
        await vscode.commands.executeCommand('vscode.changes', `${sha.slice(0, 8)} ${subject}`, resources);
        return;
      } catch {
        // fall through to the plain diff
      }
    }
    let diff: string;
    try {
      diff = await runGit(dir, ['show', '--stat', '--patch', sha]);
    } catch (e) {
      void vscode.window.showWarningMessage(`Cannot open commit ${sha.slice(0, 8)}: ${(e as Error).message}`);
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ content: diff, language: 'diff' });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  private gitApi(): (GitApi & { toGitUri(uri: vscode.Uri, ref: string): vscode.Uri }) | undefined {
    const ext = vscode.extensions.getExtension<GitExtension>('vscode.git');
    if (!ext?.isActive || !ext.exports.enabled) return undefined;
    const api = ext.exports.getAPI(1) as GitApi & { toGitUri?: (uri: vscode.Uri, ref: string) => vscode.Uri };
    return typeof api.toGitUri === 'function' ? (api as GitApi & { toGitUri(uri: vscode.Uri, ref: string): vscode.Uri }) : undefined;
  }
}
