// The engine's sessions over their life: the open ones (SessionRegistry), their ends (idle, a
// branch switch, shutdown, a caller's end, sessions a dead process left) and the summary each end
// compresses, and the forgets of other processes that retire an open session.

import type { SessionEndReason } from './api';
import { compressSession } from './compress/session';
import type { Summariser } from './compress/summariser';
import { errorMessage } from './errorText';
import type { Scope, SessionSummary } from './model/records';
import { SessionRegistry } from './sessions';
import { forgetRecords, forgetSummariesAgain, settleForgets } from './store/forget';
import { forgottenStatements } from './store/forgetKeys';
import { forgetMark, forgotSince, goneRecords, lastForgets } from './store/forgetMarks';
import { checkProject } from './store/projectTable';
import type { ProjectRepositories, Repositories } from './store/repos/repositories';
import { TABLES } from './store/schema';
import type { Store } from './store/store';

export interface SessionParts {
  store: Store;
  repos: Repositories;
  summariser: Summariser;
  summaryBudgetTokens: number;
  /** A session ends after this much quiet time. */
  sessionIdleMs: number;
  /** Writes what is pending (queued captures) before a session is compressed. */
  flush: () => Promise<void>;
  /** The store's projects. */
  projects: () => Promise<string[]>;
  /** close() has begun: the orphan sweep stops. */
  closing: () => boolean;
  /** Throws once the engine is closed. */
  assertOpen: () => void;
  log: (msg: string) => void;
}

export class SessionKeeper {
  /** The sessions open in this process. */
  readonly open: SessionRegistry;
  /** Per project, the meta table's version, the last forget's stamp and when the last whole forget began, at this process's last look (noticeForgets). */
  private readonly forgetsSeen = new Map<string, { version: number; stamp: string; whole: number }>();
  /** The sessions end() is ending (off the open list, being compressed), by project and id, oldest first. */
  private readonly ending = new Map<string, { project: string; id: string; summary: Promise<SessionSummary | null> }>();

  constructor(private readonly parts: SessionParts) {
    // A branch switch ends the session; its compression runs in the background.
    this.open = new SessionRegistry((ended) => void this.endLogged(ended.project, ended.id, 'branch_switch', `ending session ${ended.id}`));
  }

  async currentId(scope: Scope): Promise<string> {
    const project = checkProject(scope?.project);
    await this.noticeForgets([project]);
    return this.open.current(project, scope.branch ?? null, Date.now()).id;
  }

  /** Ends the scope's project's open sessions (`end`: the engine's endSession, which checks its arguments). */
  async endCurrent(scope: Scope, reason: SessionEndReason, end: (id: string) => Promise<SessionSummary | null>): Promise<{ sessionId: string; summary: SessionSummary | null }> {
    const project = checkProject(scope?.project);
    await this.noticeForgets([project]);
    const ending = this.open.ofProject(project);
    if (ending.length === 0) {
      // The idle timer (or a branch switch) is ending the project's session: that one is the current
      // session, reported once ended (it is off the open list while it is compressed).
      const under = [...this.ending.values()].filter((e) => e.project === project);
      const last = under[under.length - 1];
      if (last) return { sessionId: last.id, summary: await last.summary };
      // Nothing open: the session ended is a new one, with nothing to summarise (as before).
      ending.push(this.open.current(project, scope.branch ?? null, Date.now()));
    }
    let summary: SessionSummary | null = null;
    for (const s of ending) summary = (await end(s.id)) ?? summary;
    return { sessionId: ending[ending.length - 1].id, summary };
  }

  /** Ends a session of `repos`' project: off the open list, then compressed. */
  async end(repos: ProjectRepositories, memorySessionId: string, reason: SessionEndReason): Promise<SessionSummary | null> {
    this.open.close(repos.project, memorySessionId);
    const key = `${repos.project}\u0000${memorySessionId}`;
    const summary = this.compressEnded(repos, memorySessionId, reason);
    const entry = { project: repos.project, id: memorySessionId, summary };
    this.ending.set(key, entry);
    try {
      return await summary;
    } finally {
      if (this.ending.get(key) === entry) this.ending.delete(key);
    }
  }

  /**
   * Forgets another process ran (the CLI, another window) may have removed observations of a
   * session open here, and capture diffs a file against what its session recorded, forgotten text
   * included (see retire, which does this for this process's own forgets). So before
   * a session of a project is continued, a forget in the project since this process last looked
   * (forgetsSeen: a new stamp of a forget of the project or of everything, store/forgetMarks.ts
   * lastForgets) retires its open session, once: the next observation starts a new one. Which
   * records another process forgot is not known here (its journal is gone), so any forget in the
   * project counts; the graph cache (known entities, edge weights) is dropped for the same
   * reason. One read of the meta table's version when the meta table did not change.
   * `ownForget`: the stamps are taken as seen without retiring anything (this process's own
   * forget, which settles its sessions itself). `metaVersion`: the meta table's version when the
   * caller read it already (a write's forget mark).
   */
  async noticeForgets(projects: Iterable<string>, ownForget = false, metaVersion?: number): Promise<void> {
    const { store, repos } = this.parts;
    const version = metaVersion ?? (await store.table(TABLES.meta).version());
    const stale = [...projects].filter((p) => this.forgetsSeen.get(p)?.version !== version);
    if (stale.length === 0) return;
    for (const [project, { stamp, whole }] of await lastForgets(store, stale)) {
      const seen = this.forgetsSeen.get(project);
      this.forgetsSeen.set(project, { version, stamp, whole });
      if (seen && seen.stamp !== stamp && !ownForget) {
        this.open.retireOpen(project);
        // The graph's known entities and edge weights may name what it removed.
        repos.graphCache.clear();
      }
    }
  }

  /** When the last forget of the whole project (or of everything) began, as this process last read the stamps (noticeForgets); 0 for none. */
  wholeForgetBegan(project: string): number {
    return this.forgetsSeen.get(project)?.whole ?? 0;
  }

  /** A forget of everything ran in this process: every project's stamps are read again. */
  forgetAllSeen(): void {
    this.forgetsSeen.clear();
  }

  /**
   * A forget by id removed observations of sessions still open here: those sessions take no more
   * observations (SessionRegistry.retire), so the next capture starts a new one. Capture diffs a
   * file against the text its session recorded (the extension's edit baseline), which holds what
   * was forgotten, and starts again from the file as it is once the session has changed. What is
   * left of a retired session is summarised when it would have been (idle, shutdown), from the
   * observations still stored: the forgotten ones are gone.
   */
  retire(project: string, sessionIds: string[]): void {
    for (const id of sessionIds) this.open.retire(project, id);
  }

  /**
   * Sessions a crashed or killed process never ended have observations and no summary: once
   * they are idle, summarise them like any idle session. Runs once, shortly after open.
   */
  async endOrphans(): Promise<number> {
    const { repos, closing } = this.parts;
    const cutoff = Date.now() - this.parts.sessionIdleMs;
    let ended = 0;
    for (const project of await this.parts.projects()) {
      if (closing()) break;
      const scoped = repos.forProject(project);
      const spans = await scoped.observations.sessionSpans(`status = 'active' AND type <> 'merged'`);
      const summarised = await scoped.summaries.summarisedSessions();
      for (const { id, last } of spans.values()) {
        if (summarised.has(id) || this.open.isOpen(project, id) || last > cutoff || closing()) continue;
        await this.endLogged(project, id, 'idle', `ending orphan session ${id}`);
        ended++;
      }
    }
    return ended;
  }

  async endIdle(): Promise<void> {
    for (const s of this.open.idle(Date.now(), this.parts.sessionIdleMs)) await this.endLogged(s.project, s.id, 'idle', `ending idle session ${s.id}`);
  }

  /** Ends every open session (the engine's close). */
  async endAll(reason: SessionEndReason): Promise<void> {
    for (const s of this.open.all()) await this.endLogged(s.project, s.id, reason, `ending session ${s.id} on ${reason}`);
  }

  /** Ends a session the engine ends by itself: a failure is logged under `what`, not thrown. */
  private async endLogged(project: string, id: string, reason: SessionEndReason, what: string): Promise<void> {
    try {
      this.parts.assertOpen();
      await this.end(this.parts.repos.forProject(project), id, reason);
    } catch (e) {
      this.parts.log(`${what}: ${errorMessage(e)}`);
    }
  }

  /** end()'s work once the session is off the open list. */
  private async compressEnded(repos: ProjectRepositories, memorySessionId: string, reason: SessionEndReason): Promise<SessionSummary | null> {
    const { store } = this.parts;
    await this.parts.flush();
    const mark = await forgetMark(store);
    // The summariser is given the session's prompts, which a forget meanwhile deletes (below).
    const prompted = (await repos.prompts.recent(memorySessionId, 1)).length > 0;
    const summary = await compressSession(
      // A promoted memory the user forgot is not promoted again from the evidence it had then.
      { repos, summariser: this.parts.summariser, summaryBudgetTokens: this.parts.summaryBudgetTokens, forgottenStatements: (keys) => forgottenStatements(store, repos.project, keys) },
      memorySessionId,
      reason,
    );
    if (summary && (await forgotSince(store, mark, repos.project))) {
      await this.forgetAgain(repos, memorySessionId);
      // Its summaries may quote the prompts that forget deleted (every forget in the project does).
      if (prompted) await forgetSummariesAgain(this.parts.repos, repos.project, (await repos.summaries.ofSessionsOnBranches([memorySessionId])).map((s) => s.summary.id));
    }
    // The memories it promoted supersede others, which a forget may have removed meanwhile.
    await settleForgets(this.parts.repos, repos.project, mark, { memories: [...repos.memories.written] });
    return summary;
  }

  /**
   * A forget (in any process) ran while a session was compressed: the summary, its merged
   * observations and promoted memories were written from observations it may have removed
   * since. Those observations are forgotten again, which takes with them what cites them.
   */
  private async forgetAgain(repos: ProjectRepositories, sessionId: string): Promise<void> {
    const sources = await repos.summaries.sources((await repos.summaries.ofSessionsOnBranches([sessionId])).map((s) => s.summary.id));
    const gone = await goneRecords(this.parts.store, repos, { observation: sources });
    if (gone.observation.size > 0) await forgetRecords(this.parts.repos, { kind: 'observation', ids: [...gone.observation] }, { project: repos.project });
  }
}
