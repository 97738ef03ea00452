import * as vscode from 'vscode';
import type { Observation, Scope } from '../../core/model/records';

export interface CapturedEntry {
  project: string;
  observation: Observation;
}

/**
 * The user's window on capture: every stored observation, as stored (after redaction), in an
 * output channel, plus the last few hundred in memory for "Show What Is Captured".
 */
export class CapturedLog implements vscode.Disposable {
  private readonly channel = vscode.window.createOutputChannel('Code Memory: Captured');
  private readonly recent: CapturedEntry[] = [];
  private static readonly KEEP = 300;

  add(observations: readonly Observation[], scope: Scope): void {
    for (const observation of observations) {
      this.recent.push({ project: scope.project, observation });
      const when = new Date(observation.created_at_epoch).toLocaleTimeString();
      const files = [...parseList(observation.files_modified), ...parseList(observation.files_read)];
      this.channel.appendLine(
        `${when}  #${observation.id} ${observation.type.padEnd(8)} ${observation.title ?? ''}` +
          `${files.length ? `  [${files.slice(0, 5).join(', ')}]` : ''}  (${scope.project}${observation.branch ? `@${observation.branch}` : ''})`,
      );
    }
    if (this.recent.length > CapturedLog.KEEP) this.recent.splice(0, this.recent.length - CapturedLog.KEEP);
  }

  note(message: string): void {
    this.channel.appendLine(`${new Date().toLocaleTimeString()}  ${message}`);
  }

  entries(): readonly CapturedEntry[] {
    return this.recent;
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }
}

export function parseList(json: string | null | undefined): string[] {
  if (!json) return [];
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}
