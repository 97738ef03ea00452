import type { SourceKind, Scope } from '../../core/model/records';
import { MemoryNode, ObservationNode, SessionNode } from '../views/nodes';
import type { DetailsTarget } from '../webviews/detailsPanel';

export interface ItemTarget {
  kind: SourceKind;
  id: number;
  /** Every record the item stands for (a session: its summaries, one per branch it worked on); `id` alone when absent. */
  ids?: number[];
  scope: Scope;
  label: string;
}

/** What a context-menu command acts on: a tree node, or the record shown in the details panel. */
export function itemTarget(arg: unknown): ItemTarget | undefined {
  if (arg instanceof ObservationNode) return { kind: 'observation', id: arg.observation.id, scope: arg.scope, label: arg.observation.title ?? `observation #${arg.observation.id}` };
  if (arg instanceof MemoryNode) return { kind: 'memory', id: arg.memory.id, scope: arg.scope, label: arg.memory.title };
  if (arg instanceof SessionNode && arg.session.summary) {
    const ids = arg.session.summary_ids?.length ? arg.session.summary_ids : [arg.session.summary.id];
    return { kind: 'session_summary', id: arg.session.summary.id, ids, scope: arg.scope, label: `session ${arg.session.memory_session_id} (its summary and observations)` };
  }
  const t = arg as DetailsTarget | undefined;
  if (t && typeof t === 'object' && 'kind' in t) {
    if (t.kind === 'observation') return { kind: 'observation', id: t.id, scope: t.scope, label: `observation #${t.id}` };
    if (t.kind === 'memory') return { kind: 'memory', id: t.id, scope: t.scope, label: `memory #${t.id}` };
    if (t.kind === 'summary') return { kind: 'session_summary', id: t.id, scope: t.scope, label: `session summary #${t.id} and the observations it summarises` };
  }
  return undefined;
}

/** The stable text reference of a record, as agents use it with get_observations. */
export function referenceOf(t: ItemTarget): string {
  return `${t.kind}:${t.id}`;
}
