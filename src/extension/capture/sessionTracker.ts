import * as vscode from 'vscode';
import type { SessionEndReason } from '../../core/api';
import type { SessionSummary } from '../../core/model/records';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';
import type { CaptureService } from './captureService';
import type { CapturedLog } from './capturedLog';

export interface EndedSession {
  folder: string;
  project: string;
  sessionId: string;
  reason: SessionEndReason;
  summary: SessionSummary | null;
}

/**
 * Ends sessions (which compresses them into a summary) on window close and on request. Idle
 * time and branch switches end sessions inside the engine (observations carry their branch,
 * and the engine gets codeMemory.session.idleMinutes); on a branch switch this writes the
 * pending capture at once so the switch is seen without delay.
 */
export class SessionTracker implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly _onDidEndSession = new vscode.EventEmitter<EndedSession>();
  readonly onDidEndSession = this._onDidEndSession.event;
  private ending = Promise.resolve();

  constructor(
    private readonly capture: CaptureService,
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
    private readonly log: CapturedLog,
  ) {
    this.disposables.push(
      capture.git.onDidChangeBranch((change) => {
        // The engine starts a new session on the new branch: edits there start from the file as it is.
        this.capture.editors.resetSession([change.folder]);
        void this.capture.queue.flush();
      }),
      this._onDidEndSession,
    );
  }

  /** Ends the session of the given folders (default: every folder with activity, else all). */
  end(folders: string[] | undefined, reason: SessionEndReason): Promise<EndedSession[]> {
    const run = this.ending.then(() => this.endNow(folders, reason));
    this.ending = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async endNow(folders: string[] | undefined, reason: SessionEndReason): Promise<EndedSession[]> {
    const targets = folders ?? (this.capture.activeFolders.size > 0 ? [...this.capture.activeFolders] : this.scopes.folders().map((f) => f.uri.toString()));
    if (targets.length === 0) return [];
    await this.capture.checkpoint();
    this.capture.editors.resetSession(targets);
    // Nothing was captured and nobody opened the store: there is no session to end.
    if (!this.engines.isOpen && this.capture.activeFolders.size === 0) return [];
    const engine = await this.engines.get();
    const ended: EndedSession[] = [];
    for (const folder of targets) {
      const scope = await this.scopes.scopeFor(folder);
      const { sessionId, summary } = await engine.endCurrentSession({ project: scope.project }, reason);
      this.capture.activeFolders.delete(folder);
      const entry = { folder, project: scope.project, sessionId, reason, summary };
      ended.push(entry);
      this.log.note(`Session ${sessionId} of ${scope.project} ended (${reason})${summary ? `: summary #${summary.id}` : ''}.`);
      this._onDidEndSession.fire(entry);
    }
    return ended;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
