// A small graph derived from observations: files, commits, branches, authors and concepts as
// entities; modified, co_changed, on_branch, authored and about edges, weighted by how often
// they were seen. Upserted by key, so repeated events raise weights instead of adding rows.

import type { Observation } from '../model/records';
import { parseJson } from './mapping';
import type { Row } from './store';
import { cutText } from '../tokens';

const MAX_CO_CHANGED = 20;

export function deriveGraph(observations: Observation[], now: number): { entities: Row[]; relationships: Row[] } {
  const entities = new Map<string, Row>();
  const edges = new Map<string, Row>();
  const entity = (project: string, type: string, label: string, properties: Record<string, string> = {}): string => {
    const id = `${type}:${label}`;
    entities.set(`${project}\u0000${id}`, { project, id, label, type, properties: JSON.stringify(properties), updated_at_epoch: now });
    return id;
  };
  const edge = (project: string, source: string, target: string, type: string): void => {
    const key = `${project}\u0000${source}\u0000${target}\u0000${type}`;
    const e = edges.get(key) ?? { project, source, target, type, weight: 0, updated_at_epoch: now };
    e.weight = Number(e.weight) + 1;
    edges.set(key, e);
  };

  for (const o of observations) {
    const project = o.project ?? '';
    const modified = parseJson<string[]>(o.files_modified, []);
    const read = parseJson<string[]>(o.files_read, []);
    const fileIds = modified.map((f) => entity(project, 'file', f));
    for (const f of read) entity(project, 'file', f);
    const branchId = o.branch ? entity(project, 'branch', o.branch) : null;
    let anchor: string | null = null;
    if (o.commit_sha) {
      anchor = entity(project, 'commit', o.commit_sha.slice(0, 12), { title: cutText(o.title ?? '', 200) });
      if (branchId) edge(project, anchor, branchId, 'on_branch');
      const author = /(?:^|\n)author:\s*([^\n<]+)/i.exec(o.narrative ?? '')?.[1]?.trim();
      if (author) edge(project, entity(project, 'author', author), anchor, 'authored');
    }
    for (const fid of fileIds) {
      if (anchor) edge(project, anchor, fid, 'modified');
      else if (branchId) edge(project, branchId, fid, 'modified');
    }
    const co = fileIds.slice(0, MAX_CO_CHANGED);
    for (let i = 0; i < co.length; i++) {
      for (let j = i + 1; j < co.length; j++) {
        const [a, b] = co[i] < co[j] ? [co[i], co[j]] : [co[j], co[i]];
        edge(project, a, b, 'co_changed');
      }
    }
    for (const c of parseJson<string[]>(o.concepts, []).slice(0, 10)) {
      const cid = entity(project, 'concept', c.toLowerCase());
      for (const fid of fileIds) edge(project, fid, cid, 'about');
    }
  }
  return { entities: [...entities.values()], relationships: [...edges.values()] };
}
