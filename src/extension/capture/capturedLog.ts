import { addToList } from '../../core/lists';
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

  /**
   * After a forget: what this window showed of the records that are gone goes from the list and
   * the channel (written again from what is left; earlier lines than the list holds go with it).
   * `kept` answers which of a project's observation ids the store still holds.
   */
  async prune(kept: (project: string, ids: number[]) => Promise<Set<number>>): Promise<void> {
    const byProject = new Map<string, number[]>();
    for (const { project, observation } of this.recent) addToList(byProject, project, observation.id);
    const left = new Map<string, Set<number>>();
    for (const [project, ids] of byProject) left.set(project, await kept(project, ids));
    const still = this.recent.filter((e) => left.get(e.project)?.has(e.observation.id));
    if (still.length === this.recent.length) return;
    this.recent.length = 0;
    this.channel.clear();
    this.channel.appendLine(`${new Date().toLocaleTimeString()}  (written again after a forget: what was forgotten is no longer shown)`);
    for (const e of still) this.add([e.observation], { project: e.project });
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
