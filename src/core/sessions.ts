// Open sessions, one per project: a session starts with the first observation, and ends after
// idle time, on a branch switch, at shutdown or on request. A session is a key within its
// project, so every end names both.

import { randomUUID } from 'node:crypto';

export interface OpenSession {
  id: string;
  project: string;
  branch: string | null;
  startedAt: number;
  lastActivity: number;
}

export class SessionRegistry {
  private readonly open = new Map<string, OpenSession>();

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

  /** Forgets the session as open (it is being ended). */
  close(project: string, sessionId: string): void {
    if (this.open.get(project)?.id === sessionId) this.open.delete(project);
  }

  isOpen(project: string, sessionId: string): boolean {
    return this.open.get(project)?.id === sessionId;
  }

  idle(now: number, idleMs: number): OpenSession[] {
    return [...this.open.values()].filter((s) => now - s.lastActivity >= idleMs);
  }

  all(): OpenSession[] {
    return [...this.open.values()];
  }

  clear(project?: string): void {
    if (project === undefined) this.open.clear();
    else this.open.delete(project);
  }
}
