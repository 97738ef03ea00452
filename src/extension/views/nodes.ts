import { addToList } from '../../core/lists';
import * as vscode from 'vscode';
import type { SessionInfo } from '../../core/api';
import type { Freshness } from '../../core/capture/freshness';
import type { Memory, Observation, RequestLogEntry, Scope } from '../../core/model/records';
import { printable } from '../../core/model/printable';
import { parseList } from '../capture/capturedLog';
import { freshnessBadge } from '../freshness';

// Tree nodes: TreeItem subclasses that carry the record they show. Menus in package.json key
// on their contextValue (viewItem == observation, memory, session, ...).

export const OPEN_DETAILS = 'codeMemory.openDetails';
export const SHOW_MORE_MEMORIES = 'codeMemory.showMoreMemories';

/** A project of the window: the top level of the Sessions view, and of the Memories view when the window has several. */
export class ProjectNode extends vscode.TreeItem {
  constructor(
    readonly scope: Scope,
    readonly folder: vscode.WorkspaceFolder | undefined,
    description: string,
  ) {
    super(scope.project, vscode.TreeItemCollapsibleState.Expanded);
    this.id = `project:${scope.project}`;
    this.description = description;
    this.iconPath = new vscode.ThemeIcon('repo');
    this.contextValue = 'project';
    this.tooltip = folder ? `${scope.project}\n${folder.uri.fsPath}` : scope.project;
  }
}

export class SessionNode extends vscode.TreeItem {
  constructor(
    readonly scope: Scope,
    readonly session: SessionInfo,
  ) {
    super(sessionLabel(session), vscode.TreeItemCollapsibleState.Collapsed);
    this.id = `session:${session.memory_session_id}`;
    const summary = session.summary;
    const gist = summary ? (summary.completed || summary.request || summary.learned || '').split('\n')[0] : '';
    this.description = gist ? truncate(gist, 80) : `${session.observation_count} observation${session.observation_count === 1 ? '' : 's'}${session.ended_at_epoch ? '' : ' · in progress'}`;
    this.iconPath = new vscode.ThemeIcon(session.ended_at_epoch ? (summary ? 'notebook' : 'history') : 'record', session.ended_at_epoch ? undefined : new vscode.ThemeColor('charts.green'));
    this.contextValue = summary ? 'session.summarised' : 'session';
    const md = new vscode.MarkdownString();
    // Stored text goes in as text: a summary or branch holding markdown would show its links and images.
    md.appendMarkdown('**Session** ');
    md.appendText(session.memory_session_id);
    md.appendMarkdown('\n\n');
    md.appendText(`${new Date(session.started_at_epoch).toLocaleString()}${session.branch ? ` · branch ${session.branch}` : ''} · ${session.observation_count} observations`);
    md.appendMarkdown('\n\n');
    if (summary?.request) {
      md.appendMarkdown('**Request:** ');
      md.appendText(summary.request);
      md.appendMarkdown('\n\n');
    }
    if (summary?.completed) {
      md.appendMarkdown('**Completed:** ');
      md.appendText(summary.completed);
    }
    this.tooltip = md;
    this.command = { command: OPEN_DETAILS, title: 'Show Details', arguments: [this] };
  }
}

export class ObservationNode extends vscode.TreeItem {
  constructor(
    readonly scope: Scope,
    readonly observation: Observation,
    readonly freshness: Freshness | null = null,
  ) {
    super(observation.title || `${observation.type} #${observation.id}`, vscode.TreeItemCollapsibleState.None);
    this.id = `observation:${observation.id}`;
    const badge = freshnessBadge(freshness);
    this.description = `${observation.type} · ${new Date(observation.created_at_epoch).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}${badge ? ` · ${badge}` : ''}`;
    this.iconPath = new vscode.ThemeIcon(observationIcon(observation.type), observation.status === 'suppressed' ? new vscode.ThemeColor('disabledForeground') : undefined);
    this.contextValue = observation.status === 'suppressed' ? 'observation.suppressed' : 'observation';
    const files = [...parseList(observation.files_modified), ...parseList(observation.files_read)];
    this.tooltip = [observation.title, observation.subtitle, files.join(', '), observation.commit_sha && `commit ${observation.commit_sha.slice(0, 10)}`, freshness && freshness.state !== 'unknown' && freshness.marker]
      .filter(Boolean)
      .join('\n');
    this.command = { command: OPEN_DETAILS, title: 'Show Details', arguments: [this] };
  }
}

/** The project's own documents (README, docs/, changelogs, doc comments) that Import Git History read. */
export class DocumentsNode extends vscode.TreeItem {
  constructor(
    readonly scope: Scope,
    readonly documents: Observation[],
  ) {
    super('Project documents', vscode.TreeItemCollapsibleState.Collapsed);
    this.id = `documents:${scope.project}`;
    const files = new Set(documents.map(documentPath)).size;
    this.description = `${documents.length} section${documents.length === 1 ? '' : 's'} from ${files} file${files === 1 ? '' : 's'}`;
    this.iconPath = new vscode.ThemeIcon('book');
    this.contextValue = 'documents';
    this.tooltip = 'Sections of the README, docs/, changelogs, decision records and doc comments, read at the imported revision. Agents get them in retrieve_memory\'s documents; they are never summarised as a session.';
  }

  /** One node per file, in path order, each with its sections in the order they were read. */
  files(): DocumentFileNode[] {
    const byFile = new Map<string, Observation[]>();
    for (const d of [...this.documents].sort((a, b) => a.id - b.id)) {
      const file = documentPath(d);
      addToList(byFile, file, d);
    }
    return [...byFile].sort(([a], [b]) => a.localeCompare(b)).map(([file, sections]) => new DocumentFileNode(this.scope, file, sections));
  }
}

export class DocumentFileNode extends vscode.TreeItem {
  constructor(
    readonly scope: Scope,
    readonly file: string,
    readonly sections: Observation[],
  ) {
    super(file, vscode.TreeItemCollapsibleState.Collapsed);
    this.id = `documents:${scope.project}:${file}`;
    this.description = `${sections.length} section${sections.length === 1 ? '' : 's'}`;
    this.iconPath = new vscode.ThemeIcon('file-text');
    this.contextValue = 'documentFile';
  }

  /** Its sections, labelled by their headings (the file is the node above). */
  children(): ObservationNode[] {
    const suffix = ` (${this.file})`;
    return this.sections.map((d) => {
      const node = new ObservationNode(this.scope, d);
      if (d.title?.endsWith(suffix)) node.label = d.title.slice(0, -suffix.length);
      return node;
    });
  }
}

/** The file a document section was read from (its title names it when files_read does not). */
function documentPath(d: Observation): string {
  return parseList(d.files_read)[0] ?? d.title;
}

/** A project's memories in a window of several projects: its conflicts and type groups below it. */
export class MemoryProjectNode extends ProjectNode {
  constructor(
    scope: Scope,
    folder: vscode.WorkspaceFolder | undefined,
    memoryCount: number,
    readonly groups: CodeMemoryNode[],
  ) {
    super(scope, folder, `${memoryCount} memor${memoryCount === 1 ? 'y' : 'ies'}`);
  }
}

/**
 * A type's memories: their ids in the order shown (current first, then newest first), each page
 * read whole when it is shown. `parent`: the project node's id and a slash in a window of several
 * projects, where types repeat.
 */
export class MemoryTypeNode extends vscode.TreeItem {
  constructor(
    readonly memoryType: string,
    readonly scope: Scope,
    readonly ids: readonly number[],
    readonly parent = '',
  ) {
    super(pluralType(memoryType), vscode.TreeItemCollapsibleState.Expanded);
    this.id = `${parent}memory-type:${memoryType}`;
    this.description = String(ids.length);
    this.iconPath = new vscode.ThemeIcon(memoryIcon(memoryType));
    this.contextValue = 'memoryType';
  }
}

export class MemoryNode extends vscode.TreeItem {
  /**
   * `history`: the memories this one superseded, shown under it (newest first). `parent` makes
   * the tree id unique where one memory shows twice (as a side of a conflict, and in its list).
   * `isCurrent` tells whether the other side of one of its conflicts still holds (see temporalState).
   */
  constructor(
    readonly scope: Scope,
    readonly memory: Memory,
    readonly history: Memory[] = [],
    parent = '',
    isCurrent: (id: number) => boolean = () => true,
  ) {
    super(oneLine(memory.title), history.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    this.id = `${parent}memory:${memory.id}`;
    this.description = temporalState(memory, isCurrent);
    this.iconPath = new vscode.ThemeIcon(
      memory.status === 'active' ? memoryIcon(memory.memory_type) : memory.status === 'superseded' ? 'history' : 'circle-slash',
      memory.status === 'active' ? undefined : new vscode.ThemeColor('disabledForeground'),
    );
    this.contextValue = memory.status === 'active' ? 'memory' : memory.status === 'suppressed' ? 'memory.suppressed' : 'memory.inactive';
    const md = new vscode.MarkdownString();
    md.appendMarkdown(`**${escapeMd(oneLine(memory.title))}** (${memory.memory_type}, ${memory.status}, memory ${memory.id})\n\n`);
    md.appendText(truncate(memory.text, 600));
    if (memory.superseded_by !== null) md.appendMarkdown(`\n\nSuperseded by memory ${memory.superseded_by} on ${day(memory.valid_to_epoch)}.`);
    this.tooltip = md;
    this.command = { command: OPEN_DETAILS, title: 'Show Details', arguments: [this] };
  }
}

/** "Possible conflicts": pairs of memories that may disagree, waiting for a person's review. */
export class ConflictGroupNode extends vscode.TreeItem {
  constructor(
    readonly conflicts: ConflictNode[],
    parent = '',
  ) {
    super('Possible conflicts', vscode.TreeItemCollapsibleState.Expanded);
    this.id = `${parent}memory-conflicts`;
    this.description = `${conflicts.length} to review`;
    this.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'));
    this.contextValue = 'memoryConflicts';
    this.tooltip = 'Memories that may say different things about the same subject or files. Keep both, mark one superseded, or edit one.';
  }
}

/** One possible conflict: its two sides are its children; the review commands act on it. */
export class ConflictNode extends vscode.TreeItem {
  constructor(
    readonly scope: Scope,
    readonly older: Memory,
    readonly newer: Memory,
    readonly reason: string,
    parent = '',
    private readonly isCurrent: (id: number) => boolean = () => true,
  ) {
    super(`${oneLine(newer.title)} ↔ ${oneLine(older.title)}`, vscode.TreeItemCollapsibleState.Expanded);
    this.id = `${parent}conflict:${older.id}:${newer.id}`;
    this.description = reason;
    this.iconPath = new vscode.ThemeIcon('git-compare', new vscode.ThemeColor('list.warningForeground'));
    this.contextValue = 'memoryConflict';
    this.tooltip = `Memory ${newer.id} may disagree with memory ${older.id}: ${reason}.\nKeep both, mark one superseded, or edit one; the choice is recorded.`;
  }

  sides(): MemoryNode[] {
    return [this.newer, this.older].map((m) => new MemoryNode(this.scope, m, [], `${this.id}:`, this.isCurrent));
  }
}

/**
 * The last item of a level that shows a page of a longer list: choosing it shows the next page.
 * `parent` is the node whose children it ends (the level's own key: its id).
 */
export class MoreNode extends vscode.TreeItem {
  constructor(
    readonly parent: vscode.TreeItem,
    shown: number,
    total: number,
    next: number,
  ) {
    super('Show more…', vscode.TreeItemCollapsibleState.None);
    this.id = `${parent.id ?? ''}/more`;
    this.description = `${count(shown)} of ${count(total)} shown`;
    this.iconPath = new vscode.ThemeIcon('ellipsis');
    this.contextValue = 'more';
    this.tooltip = `Show the next ${count(next)} (newest first).`;
    this.command = { command: SHOW_MORE_MEMORIES, title: 'Show More', arguments: [this] };
  }
}

export class RequestNode extends vscode.TreeItem {
  constructor(readonly entry: RequestLogEntry) {
    super(entry.tool, vscode.TreeItemCollapsibleState.None);
    this.id = `request:${entry.request_id}`;
    this.description = `${entry.status} · ${entry.duration_ms} ms · ${new Date(entry.created_at_epoch).toLocaleTimeString()}`;
    const ok = entry.status === 'ok' || entry.status === 'success';
    this.iconPath = new vscode.ThemeIcon(ok ? 'pass' : 'error', ok ? undefined : new vscode.ThemeColor('errorForeground'));
    this.contextValue = 'request';
    this.tooltip = `${entry.tool} ${truncate(entry.arguments, 300)}`;
    this.command = { command: OPEN_DETAILS, title: 'Show Details', arguments: [this] };
  }
}

export class MessageNode extends vscode.TreeItem {
  constructor(message: string, icon = 'info') {
    super(message, vscode.TreeItemCollapsibleState.None);
    this.iconPath = new vscode.ThemeIcon(icon);
    this.contextValue = 'message';
  }
}

export type CodeMemoryNode = ProjectNode | MemoryProjectNode | DocumentsNode | DocumentFileNode | SessionNode | ObservationNode | MemoryTypeNode | MemoryNode | ConflictGroupNode | ConflictNode | MoreNode | RequestNode | MessageNode;

export function sessionLabel(session: SessionInfo): string {
  const d = new Date(session.started_at_epoch);
  const date = d.toLocaleDateString([], { month: 'short', day: 'numeric' });
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return `${date} ${time}${session.branch ? ` · ${session.branch}` : ''}`;
}

/**
 * How a memory stands in time: current, history (from when to when), or suppressed; and whether it
 * is in question: a conflict with a memory that is history or suppressed is not (as the tools say,
 * see timeNote), so `isCurrent` tells whether the other side of a conflict still holds.
 */
export function temporalState(memory: Memory, isCurrent: (id: number) => boolean = () => true): string {
  const facts = memory.temporal_facts ?? [];
  const closed = facts.filter((f) => f.valid_to_epoch !== null).length;
  const since = day(memory.created_at_epoch);
  const open = (memory.conflicts ?? []).filter((c) => c.resolution === 'open' && isCurrent(c.id)).length;
  const flag = open > 0 ? ` · ${open} possible conflict${open === 1 ? '' : 's'}` : '';
  if (memory.status === 'superseded') return `history · ${since} – ${day(memory.valid_to_epoch ?? memory.updated_at_epoch)}`;
  if (memory.status !== 'active') return memory.status;
  if (memory.supersedes && memory.supersedes.length > 0) return `current · since ${since} · replaces ${memory.supersedes.length}${flag}`;
  if (closed > 0) return `current · ${closed} earlier fact${closed === 1 ? '' : 's'} closed${flag}`;
  return `current · since ${since}${flag}`;
}

function day(epoch: number | null): string {
  return epoch === null ? '?' : new Date(epoch).toLocaleDateString([], { month: 'short', day: 'numeric' });
}

export function observationIcon(type: string): string {
  switch (type) {
    case 'read':
      return 'eye';
    case 'edit':
      return 'edit';
    case 'create':
      return 'new-file';
    case 'delete':
      return 'trash';
    case 'rename':
      return 'arrow-swap';
    case 'commit':
      return 'git-commit';
    case 'checkout':
      return 'git-branch';
    case 'task':
      return 'tools';
    case 'terminal':
      return 'terminal';
    case 'agent':
      return 'hubot';
    case 'note':
      return 'note';
    case 'merged':
      return 'layers';
    case 'document':
      return 'book';
    default:
      return 'circle-small';
  }
}

export function memoryIcon(type: string): string {
  switch (type) {
    case 'decision':
      return 'law';
    case 'convention':
      return 'symbol-ruler';
    case 'fact':
      return 'info';
    case 'preference':
      return 'heart';
    case 'note':
      return 'note';
    default:
      return 'bookmark';
  }
}

function pluralType(type: string): string {
  const name = type.charAt(0).toUpperCase() + type.slice(1);
  return name.endsWith('s') ? name : `${name}s`;
}

export function truncate(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Markdown syntax escaped, `&` too: an entity (`&amp;`) would show as its character. */
function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>~&]/g, '\\$&');
}

/** A stored title as one line of a tree: without control characters and escape sequences, its line breaks as spaces. */
export function oneLine(s: string): string {
  return printable(s).replace(/\s*\n\s*/g, ' ').replace(/\t/g, ' ');
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}
