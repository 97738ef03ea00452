import * as vscode from 'vscode';
import type { SearchHit } from '../../core/api';
import type { EngineHost } from '../engineHost';
import type { ScopeService } from '../scopes';

/** Records looked at per file; a lens counts, it does not list. */
const HITS_PER_FILE = 100;

interface FileMemory {
  hits: SearchHit[];
}

/**
 * "2 decisions · 3 edits · 5 sessions" from the records about a file (or a symbol in it). `capped`:
 * the records looked at were cut at HITS_PER_FILE, so each count is at least what it says ("100+ edits").
 */
export function lensTitle(hits: readonly SearchHit[], capped = false): string {
  const memories = new Map<string, number>();
  let edits = 0;
  const sessions = new Set<string>();
  for (const h of hits) {
    if (h.cell.source_kind === 'memory') memories.set(h.cell.type, (memories.get(h.cell.type) ?? 0) + 1);
    else if (h.cell.type === 'edit') edits++;
    if (h.cell.session_id) sessions.add(h.cell.session_id);
  }
  const more = capped ? '+' : '';
  const parts = [...memories.entries()].map(([type, n]) => `${n}${more} ${type}${n === 1 && !capped ? '' : type.endsWith('s') ? '' : 's'}`);
  if (edits) parts.push(`${edits}${more} edit${edits === 1 && !capped ? '' : 's'}`);
  if (sessions.size) parts.push(`${sessions.size}${more} session${sessions.size === 1 && !capped ? '' : 's'}`);
  return parts.join(' · ');
}

/**
 * Memory anchored to code: a CodeLens at the top of a file with memories, and on each symbol that
 * records name (an edit's title names the symbols it changed), that opens them in the Recall panel.
 * Records are found by the file's workspace-relative path, so they follow a file as long as its
 * path is the one capture recorded.
 */
export class MemoryCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly cache = new Map<string, FileMemory>();
  private readonly _onDidChange = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this._onDidChange.event;
  private readonly registration: vscode.Disposable;
  /** Counts read before the last refresh() are not kept: they may count a record forgotten since. */
  private generation = 0;

  constructor(
    private readonly engines: EngineHost,
    private readonly scopes: ScopeService,
  ) {
    this.registration = vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this);
  }

  /** Records were written or forgotten: counts may have changed. */
  refresh(): void {
    this.generation++;
    this.cache.clear();
    this._onDidChange.fire();
  }

  async provideCodeLenses(document: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    // Never open the store for a lens: it shows once something else has opened it.
    if (!this.engines.isOpen) return [];
    const folder = vscode.workspace.getWorkspaceFolder(document.uri);
    if (!folder) return [];
    const rel = vscode.workspace.asRelativePath(document.uri, false);
    const key = document.uri.toString();
    let entry = this.cache.get(key);
    // Typing does not change what memory holds; a capture batch does (refresh() clears the cache).
    if (!entry) {
      const generation = this.generation;
      const scope = await this.scopes.scopeFor(folder.uri.toString());
      const engine = await this.engines.get();
      const hits = await engine.search(rel, { scope: { project: scope.project }, filter: { files: [rel] }, limit: HITS_PER_FILE }).catch(() => []);
      entry = { hits };
      if (generation === this.generation) this.cache.set(key, entry);
    }
    if (token.isCancellationRequested || entry.hits.length === 0) return [];
    // As many records as were looked at: there may be more, which the counts must not deny.
    const capped = entry.hits.length >= HITS_PER_FILE;
    const open = (query: string): vscode.Command => ({ title: '', command: 'codeMemory.recallContextForSelection', arguments: [{ query }] });
    const lenses = [new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), { ...open(rel), title: `Code Memory: ${lensTitle(entry.hits, capped)}` })];
    const symbols = await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>('vscode.executeDocumentSymbolProvider', document.uri).then(
      (s) => s,
      () => undefined,
    );
    const visit = (list: readonly vscode.DocumentSymbol[]): void => {
      for (const s of list) {
        if (!('range' in s)) continue;
        const about = entry.hits.filter((h) => new RegExp(`\\b${s.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(h.cell.title));
        if (about.length > 0) lenses.push(new vscode.CodeLens(s.selectionRange, { ...open(`${s.name} ${rel}`), title: lensTitle(about, capped) }));
        visit(s.children ?? []);
      }
    };
    if (Array.isArray(symbols)) visit(symbols);
    return lenses;
  }

  dispose(): void {
    this.registration.dispose();
    this._onDidChange.dispose();
  }
}
