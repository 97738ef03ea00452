// The subset of the built-in Git extension's API (extensions/git/src/api/git.d.ts, version 1)
// that Code Memory uses. Declared here because the extension ships no types package.
import type * as vscode from 'vscode';

export interface GitRef {
  readonly name?: string;
  readonly commit?: string;
}

export interface GitRepositoryState {
  readonly HEAD: GitRef | undefined;
  readonly onDidChange: vscode.Event<void>;
}

export interface GitCommit {
  readonly hash: string;
  readonly message: string;
  readonly parents: string[];
  readonly authorName?: string;
}

export interface GitRepository {
  readonly rootUri: vscode.Uri;
  readonly state: GitRepositoryState;
  readonly onDidCommit?: vscode.Event<void>;
  readonly onDidCheckout?: vscode.Event<void>;
  getCommit(ref: string): Promise<GitCommit>;
}

export interface GitApi {
  readonly state: 'uninitialized' | 'initialized';
  readonly onDidChangeState: vscode.Event<'uninitialized' | 'initialized'>;
  readonly repositories: GitRepository[];
  readonly onDidOpenRepository: vscode.Event<GitRepository>;
  readonly onDidCloseRepository: vscode.Event<GitRepository>;
}

export interface GitExtension {
  readonly enabled: boolean;
  getAPI(version: 1): GitApi;
}
