import * as vscode from 'vscode';
import type { SessionInfo } from '../../core/api';
import type { Memory, Observation, RequestLogEntry, Scope, SessionSummary } from '../../core/model/records';
import { parseList } from '../capture/capturedLog';
import type { EngineHost } from '../engineHost';
import type { Freshness } from '../../core/capture/freshness';
import type { FreshnessService } from '../freshness';
import type { WebviewMessage } from './html';
import { action, escapeHtml, openPanel, page, relativeTime, renderText } from './html';
import type { Navigation } from './navigation';
import { fileActivitySvg, pointsOf, sessionsSvg } from './timeline';

export type DetailsTarget =
  | { kind: 'observation'; scope: Scope; id: number }
  | { kind: 'session'; scope: Scope; session: SessionInfo }
  | { kind: 'summary'; scope: Scope; id: number }
  | { kind: 'memory'; scope: Scope; id: number }
  | { kind: 'request'; entry: RequestLogEntry }
  | { kind: 'node'; scope: Scope; nodeId: string };

/** One reusable panel that shows any record: summary, files as links, commit, and a timeline. */
export class DetailsPanel implements vscode.Disposable {
  static readonly viewType = 'codeMemory.details';
  private panel: vscode.WebviewPanel | undefined;
  private current: DetailsTarget | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly engines: EngineHost,
    private readonly navigation: Navigation,
    private readonly freshness: FreshnessService,
  ) {}

  get visibleTarget(): DetailsTarget | undefined {
    return this.panel ? this.current : undefined;
  }

  async show(target: DetailsTarget): Promise<void> {
    this.current = target;
    if (!this.panel) {
      const beside = { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true };
      this.panel = openPanel(this.extensionUri, DetailsPanel.viewType, 'Code Memory', beside, (m) => this.onMessage(m), () => (this.panel = undefined));
    } else {
      this.panel.reveal(undefined, true);
    }
    await this.draw(target);
  }

  /**
   * The store changed: the record on screen is read again, so that a forgotten one (or one of a
   * forgotten project, or anything after Forget Everything) says it is gone instead of staying.
   */
  async refresh(): Promise<void> {
    const target = this.current;
    if (this.panel && target && this.engines.isOpen) await this.draw(target);
  }

  private async draw(target: DetailsTarget): Promise<void> {
    const panel = this.panel;
    if (!panel) return;
    let title = 'Code Memory';
    let body: string;
    try {
      ({ title, body } = await this.render(target));
    } catch (err) {
      body = `<p class="error">${escapeHtml(err instanceof Error ? err.message : String(err))}</p>`;
    }
    if (this.current !== target || this.panel !== panel) return;
    // The tab's title too: a forgotten record's title must not stay on it.
    panel.title = title;
    panel.webview.html = page(panel.webview, this.extensionUri, title, body);
  }

  /** The scope of the record shown: what a link on its page opens is looked up there. */
  private shownScope(): Scope | null {
    const target = this.current;
    if (!target) return null;
    return target.kind === 'request' ? { project: target.entry.project } : target.scope;
  }

  private async onMessage(m: WebviewMessage): Promise<void> {
    const scope = this.shownScope();
    if (!scope) return;
    switch (m.type) {
      case 'openFile':
        return this.navigation.openFile(m.path, scope.project, m.line);
      case 'openCommit':
        return this.navigation.openCommit(m.sha, scope.project);
      case 'openObservation':
        return this.show({ kind: 'observation', scope, id: m.id });
      case 'openNode':
        return this.show({ kind: 'node', scope, nodeId: m.nodeId });
      // No 'command': this panel's pages offer none, and one posted by markup a stored record smuggled
      // in would run a codeMemory command (suppress, pause capture) on the record shown.
    }
  }

  private async render(target: DetailsTarget): Promise<{ title: string; body: string }> {
    const engine = await this.engines.get();
    switch (target.kind) {
      case 'observation': {
        const [o] = await engine.getObservations([target.id], target.scope, { includeSuppressed: true });
        if (!o) throw new Error(`Observation #${target.id} is no longer in the store (it may have been forgotten).`);
        const session = await engine.listObservations(target.scope, { sessionId: o.memory_session_id, limit: 500 });
        const fresh = await this.freshness.check(target.scope.project, o.commit_sha, [...parseList(o.files_modified), ...parseList(o.files_read)]);
        return { title: o.title ?? `Observation #${o.id}`, body: observationBody(target.scope, o, session, fresh) };
      }
      case 'session': {
        const id = target.session.memory_session_id;
        const observations = await engine.listObservations(target.scope, { sessionId: id, limit: 500 });
        const sessions = await engine.listSessions(target.scope, 50);
        // As stored now, not as the tree node held it: its summary may have been forgotten since.
        const stored = sessions.find((s) => s.memory_session_id === id) ?? (await engine.listSessions(target.scope, 500)).find((s) => s.memory_session_id === id);
        if (!stored && observations.length === 0) throw new Error(`Session ${id} is no longer in the store (it may have been forgotten).`);
        return { title: `Session ${id.slice(0, 8)}`, body: sessionBody(target.scope, stored ?? { ...target.session, summary: null }, observations, sessions) };
      }
      case 'summary': {
        const [s] = await engine.getSessionSummaries([target.id], target.scope, { includeSuppressed: true });
        if (!s) throw new Error(`Session summary #${target.id} is no longer in the store.`);
        const observations = await engine.listObservations(target.scope, { sessionId: s.memory_session_id, limit: 500 });
        const info = (await engine.listSessions(target.scope, 200)).find((x) => x.memory_session_id === s.memory_session_id);
        const session: SessionInfo = info ?? {
          memory_session_id: s.memory_session_id,
          project: target.scope.project,
          branch: null,
          started_at_epoch: s.created_at_epoch,
          ended_at_epoch: s.created_at_epoch,
          observation_count: observations.length,
          summary: s,
        };
        return { title: `Session ${s.memory_session_id.slice(0, 8)}`, body: sessionBody(target.scope, { ...session, summary: s }, observations, []) };
      }
      case 'memory': {
        const [m] = await engine.getMemories([target.id], target.scope, { includeSuppressed: true });
        if (!m) throw new Error(`Memory #${target.id} is no longer in the store (it may have been forgotten).`);
        return { title: m.title, body: memoryBody(target.scope, m) };
      }
      case 'request': {
        const { entry } = target;
        // The views list a project's newest 100; a forget purges the entries that quote what went.
        const kept = (await engine.listRequests({ project: entry.project }, 1000)).some((e) => e.request_id === entry.request_id);
        if (!kept) throw new Error(`This ${entry.tool} request is no longer in the request log (it may have been forgotten).`);
        return { title: `${entry.tool} request`, body: requestBody(entry) };
      }
      case 'node': {
        const detail = await engine.getNode(target.nodeId, target.scope);
        if (!detail) throw new Error(`Reference ${target.nodeId} is not in the store of ${target.scope.project}.`);
        const id = detail.cell.source_id;
        const kind = detail.cell.source_kind;
        return this.render(kind === 'observation' ? { kind: 'observation', scope: target.scope, id } : kind === 'memory' ? { kind: 'memory', scope: target.scope, id } : { kind: 'summary', scope: target.scope, id });
      }
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

function header(kind: string, title: string, badges: string[]): string {
  return `<header><div class="kind">${escapeHtml(kind)}</div><h1>${escapeHtml(title)}</h1><div class="badges">${badges.filter(Boolean).join('')}</div></header>`;
}

function badge(text: string, cls = ''): string {
  return `<span class="badge ${escapeHtml(cls)}">${escapeHtml(text)}</span>`;
}

function commitLink(sha: string | null | undefined): string {
  return sha ? action({ type: 'openCommit', sha }, `<span class="codicon">⎇</span> ${escapeHtml(sha.slice(0, 10))}`, 'badge link commit', 'Open this commit') : '';
}

function fileLinks(files: string[]): string {
  if (files.length === 0) return '';
  return `<ul class="files">${files.map((f) => `<li>${action({ type: 'openFile', path: f }, escapeHtml(f), 'link file', `Open ${f}`)}</li>`).join('')}</ul>`;
}

function section(title: string, html: string): string {
  return html ? `<section><h2>${escapeHtml(title)}</h2>${html}</section>` : '';
}

function list(items: string[]): string {
  return items.length ? `<ul>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>` : '';
}

export function observationBody(scope: Scope, o: Observation, session: Observation[], freshness: Freshness | null = null): string {
  const modified = parseList(o.files_modified);
  const read = parseList(o.files_read);
  const mainFile = modified[0] ?? read[0];
  return [
    header(`Observation #${o.id}`, o.title ?? o.type, [
      badge(o.type, `t-${o.type}`),
      o.branch ? badge(`branch ${o.branch}`) : '',
      commitLink(o.commit_sha),
      badge(new Date(o.created_at_epoch).toLocaleString()),
      o.status !== 'active' ? badge(o.status, 'warn') : '',
      freshness && freshness.state !== 'unknown' ? badge(freshness.marker, freshness.state === 'current' ? 'fresh' : 'warn') : '',
    ]),
    o.subtitle ? `<p class="subtitle">${escapeHtml(o.subtitle)}</p>` : '',
    section('What happened', renderText(o.narrative)),
    section('Facts', list(parseList(o.facts))),
    section('Concepts', parseList(o.concepts).map((c) => badge(c, 'tag')).join('')),
    section('Files modified', fileLinks(modified)),
    section('Files read', fileLinks(read)),
    section(
      'Merged from',
      o.compressed_sources?.length ? list(o.compressed_sources.map((s) => `observation #${s.source_observation_id} (${new Date(s.source_created_at_epoch).toLocaleString()})`)) : '',
    ),
    section('Activity per file in this session', fileActivitySvg(pointsOf(session), mainFile)),
    `<footer>Session ${escapeHtml(o.memory_session_id)} · ${action({ type: 'copy', text: `observation:${o.id}` }, 'Copy reference', 'link')}</footer>`,
  ].join('\n');
}

export function sessionBody(scope: Scope, s: SessionInfo, observations: Observation[], sessions: SessionInfo[]): string {
  const summary: SessionSummary | null = s.summary;
  const files = [...new Set(observations.flatMap((o) => [...parseList(o.files_modified), ...parseList(o.files_read)]))];
  const commits = [...new Set(observations.map((o) => o.commit_sha).filter((x): x is string => Boolean(x)))];
  const duration = s.ended_at_epoch ? Math.round((s.ended_at_epoch - s.started_at_epoch) / 60_000) : null;
  const sorted = [...observations].sort((a, b) => a.created_at_epoch - b.created_at_epoch);
  return [
    header(`Session · ${scope.project}`, new Date(s.started_at_epoch).toLocaleString([], { weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }), [
      s.branch ? badge(`branch ${s.branch}`) : '',
      badge(`${s.observation_count} observations`),
      badge(s.ended_at_epoch ? `${duration} min` : 'in progress', s.ended_at_epoch ? '' : 'live'),
      ...commits.slice(0, 5).map((c) => commitLink(c)),
    ]),
    summary
      ? [
          section('Request', renderText(summary.request)),
          section('Completed', renderText(summary.completed)),
          section('Learned', renderText(summary.learned)),
          section('Decisions', renderText(summary.decisions)),
          section('Next steps', renderText(summary.next_steps)),
          section('Preferences', renderText(summary.preferences)),
        ].join('')
      : `<p class="muted">${s.ended_at_epoch ? 'This session has no summary.' : 'The summary is written when the session ends (idle, branch switch, window close, or "End Session Now").'}</p>`,
    section('Activity per file', fileActivitySvg(pointsOf(sorted))),
    sessions.length > 1 ? section(`Sessions of ${scope.project}`, sessionsSvg(sessions, s.memory_session_id)) : '',
    section('Files', fileLinks(files.slice(0, 60))),
    section(
      'Observations',
      `<ol class="observations">${sorted
        .map(
          (o) =>
            `<li><span class="time">${escapeHtml(new Date(o.created_at_epoch).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }))}</span> ${badge(o.type, `t-${o.type}`)} ${action(
              { type: 'openObservation', id: o.id },
              escapeHtml(o.title ?? o.type),
            )}${o.subtitle ? ` <span class="muted">${escapeHtml(o.subtitle)}</span>` : ''}${
              // What an edit changed, or why a run failed, right in the list: the reason to open a session.
              (o.type === 'edit' || o.type === 'task' || o.type === 'terminal') && o.narrative ? `<pre class="change">${escapeHtml(o.narrative)}</pre>` : ''
            }</li>`,
        )
        .join('')}</ol>`,
    ),
  ].join('\n');
}

export function memoryBody(scope: Scope, m: Memory): string {
  const facts = m.temporal_facts ?? [];
  const factRows = facts
    .map(
      (f) =>
        `<tr class="${f.valid_to_epoch ? 'closed' : 'current'}"><td>${escapeHtml(f.subject)}</td><td>${escapeHtml(f.predicate)}</td><td>${escapeHtml(f.object)}</td><td>${
          f.valid_from_epoch ? escapeHtml(new Date(f.valid_from_epoch).toLocaleDateString()) : '—'
        }</td><td>${f.valid_to_epoch ? escapeHtml(new Date(f.valid_to_epoch).toLocaleDateString()) : 'now'}</td></tr>`,
    )
    .join('');
  const trace = (m.topic_trace ?? [])
    .map((t) => `<li><strong>${escapeHtml(t.title)}</strong> — ${escapeHtml(t.summary)} <span class="muted">(${escapeHtml(t.status)})</span></li>`)
    .join('');
  return [
    header(`Memory #${m.id}`, m.title, [
      badge(m.memory_type, 'tag'),
      badge(m.status, m.status === 'active' ? 'ok' : 'warn'),
      m.branch ? badge(`branch ${m.branch}`) : '',
      badge(`updated ${relativeTime(m.updated_at_epoch)}`),
      m.classification ? badge(m.classification) : '',
    ]),
    section('Memory', renderText(m.text)),
    section('Why it is kept', m.classification_reason ? `<p>${escapeHtml(m.classification_reason)}</p>` : ''),
    section('In time', timeLinks(m)),
    section('Facts over time', factRows ? `<table class="facts"><thead><tr><th>Subject</th><th>Predicate</th><th>Object</th><th>From</th><th>To</th></tr></thead><tbody>${factRows}</tbody></table>` : ''),
    section('Topic trace', trace ? `<ol>${trace}</ol>` : ''),
    section('Files', fileLinks(parseList(m.files))),
    `<footer>${m.session_id ? `From session ${escapeHtml(m.session_id)} · ` : ''}${action({ type: 'copy', text: `memory:${m.id}` }, 'Copy reference', 'link')}</footer>`,
  ].join('\n');
}

/** Supersession and possible conflicts, in words. */
function timeLinks(m: Memory): string {
  const day = (epoch: number | null): string => (epoch === null ? '?' : new Date(epoch).toLocaleDateString());
  const items: string[] = [];
  if (m.superseded_by !== null) items.push(`Superseded by memory #${m.superseded_by} on ${escapeHtml(day(m.valid_to_epoch))}; held from ${escapeHtml(day(m.created_at_epoch))}.`);
  // Ids as numbers and every stored word escaped: an imported record's JSON columns may hold anything.
  if (m.supersedes && m.supersedes.length > 0) items.push(`Replaces memory ${m.supersedes.map((id) => `#${Number(id)}`).join(', ')}.`);
  for (const c of m.conflicts ?? []) {
    const state = c.resolution === 'open' ? 'not reviewed yet' : `reviewed: ${String(c.resolution).replace('_', ' ')} (${day(c.resolved_at_epoch)})`;
    items.push(`Possible conflict with memory #${Number(c.id)}: ${escapeHtml(c.reason)}; ${escapeHtml(state)}.`);
  }
  return items.length > 0 ? `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : '';
}

function requestBody(e: RequestLogEntry): string {
  return [
    header('Request', e.tool, [badge(e.status, e.status === 'ok' ? 'ok' : 'warn'), badge(`${e.duration_ms} ms`), badge(new Date(e.created_at_epoch).toLocaleString()), e.session_id ? badge(`session ${e.session_id}`) : '']),
    section('Arguments', `<pre>${escapeHtml(pretty(e.arguments))}</pre>`),
    section('Response', `<pre>${escapeHtml(pretty(e.response))}</pre>`),
  ].join('\n');
}

function pretty(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}
