// Open sessions, one per project: a session starts with the first observation, and ends after
// idle time, on a branch switch, at shutdown or on request. A session is a key within its
// project, so every end names both.

import { randomUUID } from 'node:crypto';

/** Minutes of quiet after which a session ends and is summarised, unless told otherwise. */
export const DEFAULT_SESSION_IDLE_MINUTES = 30;

export interface OpenSession {
  id: string;
  project: string;
  branch: string | null;
  startedAt: number;
  lastActivity: number;
}

export class SessionRegistry {
  private readonly open = new Map<string, OpenSession>();
  /**
   * Sessions retired by a forget (see retire): no longer open to observations, still this
   * process's to end, when idle or at shutdown. Keyed by project and session id.
   */
  private readonly retired = new Map<string, OpenSession>();

  constructor(private readonly onBranchSwitch: (ended: OpenSession) => void) {}

  /** The open session of the project (created, or ended and replaced on a branch switch). */
  current(project: string, branch: string | null, now: number): OpenSession {
    const open = this.open.get(project);
    if (open) {
      if (branch === null || open.branch === null || open.branch === branch) {
        if (open.branch === null && branch !== null) open.branch = branch;
        open.lastActivity = Math.max(open.lastActivity, now);
        return open;
      }
      this.open.delete(project);
      this.onBranchSwitch(open);
    }
    const created: OpenSession = { id: `s-${now.toString(36)}-${randomUUID().slice(0, 8)}`, project, branch, startedAt: now, lastActivity: now };
    this.open.set(project, created);
    return created;
  }

  /** Forgets the session as open, or retired (it is being ended). */
  close(project: string, sessionId: string): void {
    if (this.open.get(project)?.id === sessionId) this.open.delete(project);
    this.retired.delete(retiredKey(project, sessionId));
  }

  /**
   * The open session `sessionId` of the project takes no more observations: the next one starts
   * a new session (a forget removed some of its observations, and capture diffs a file against
   * what its session recorded, forgotten text included). It is still ended like an open one, when
   * idle or at shutdown (idle, all). Returns whether it was the open session.
   */
  retire(project: string, sessionId: string): boolean {
    const open = this.open.get(project);
    if (open?.id !== sessionId) return false;
    this.open.delete(project);
    this.retired.set(retiredKey(project, sessionId), open);
    return true;
  }

  /** Retires the project's open session, if it has one (see retire). */
  retireOpen(project: string): void {
    const open = this.open.get(project);
    if (open) this.retire(project, open.id);
  }

  /** The sessions of the project this process is to end: those a forget retired, then the open one. */
  ofProject(project: string): OpenSession[] {
    const open = this.open.get(project);
    return [...[...this.retired.values()].filter((s) => s.project === project), ...(open ? [open] : [])];
  }

  /** Whether this process is to end the session: open, or retired and not ended yet. */
  isOpen(project: string, sessionId: string): boolean {
    return this.open.get(project)?.id === sessionId || this.retired.has(retiredKey(project, sessionId));
  }

  idle(now: number, idleMs: number): OpenSession[] {
    return this.all().filter((s) => now - s.lastActivity >= idleMs);
  }

  /** The sessions this process is to end: the open ones and the retired ones. */
  all(): OpenSession[] {
    return [...this.open.values(), ...this.retired.values()];
  }

  clear(project?: string): void {
    if (project === undefined) {
      this.open.clear();
      this.retired.clear();
      return;
    }
    this.open.delete(project);
    for (const [key, s] of this.retired) if (s.project === project) this.retired.delete(key);
  }
}

function retiredKey(project: string, sessionId: string): string {
  return `${project}\u0000${sessionId}`;
}
