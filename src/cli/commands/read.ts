// Reading: node, search, stats.

import type { Layer } from '../../core/model/records';
import { matches } from '../../core/model/limits';
import type { CommandImpl } from '../command';
import { openEngine, resolveScope, writeJson } from '../context';
import { allProjects } from '../options';
import { wholeNumber } from '../wholeNumber';
import { cutText } from '../../core/tokens';
import { embedderName } from '../../core/embed/factory';

const NODE_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const nodeCommand: CommandImpl = {
  name: 'node',
  async run({ options, positionals, io }) {
    const id = positionals[0];
    if (!id || !NODE_ID.test(id)) {
      io.stderr.write('error: give a node id (a UUID, as recall returns it)\n');
      return 2;
    }
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, false);
    try {
      const node = await engine.getNode(id.toLowerCase(), scope);
      if (!node) {
        io.stderr.write(`error: no node ${id} in project '${scope.project}' (use --project to read another project)\n`);
        return 1;
      }
      if (options.json) {
        writeJson(io, node);
      } else {
        const c = node.cell;
        io.stdout.write(
          `${c.title}\n${'='.repeat(Math.min(80, Math.max(3, c.title.length)))}\n` +
            `node ${c.node_id}  layer ${c.layer}  ${c.source_kind} ${c.source_id}  type ${c.type}\n` +
            `project ${c.project}${c.branch ? `  branch ${c.branch}` : ''}${c.commit_sha ? `  commit ${c.commit_sha}` : ''}\n` +
            `created ${new Date(c.created_at_epoch).toISOString()}${c.files ? `\nfiles ${c.files}` : ''}\n\n${c.text}\n`,
        );
      }
      return 0;
    } finally {
      await engine.close();
    }
  },
};

export const searchCommand: CommandImpl = {
  name: 'search',
  async run({ options, values, positionals, io }) {
    const text = positionals.join(' ').trim();
    if (!text) {
      io.stderr.write('error: give the text to search for\n');
      return 2;
    }
    const limit = values.limit === undefined ? 10 : wholeNumber(values.limit, 1, 200);
    if (limit === undefined) {
      io.stderr.write('error: --limit must be an integer from 1 to 200\n');
      return 2;
    }
    const layers = values.layer as string[] | undefined;
    if (layers && !layers.every((l) => l === 'L0' || l === 'L1' || l === 'L2')) {
      io.stderr.write('error: --layer must be L0, L1 or L2\n');
      return 2;
    }
    const scope = await resolveScope(options);
    const engine = await openEngine(options, io, true);
    try {
      // As the tools do: a hit no list scored above the floor is no answer (a query about nothing in the store lists nothing).
      const hits = matches(await engine.search(text, { scope, limit, layers: layers as Layer[] | undefined }));
      if (options.json) {
        writeJson(io, hits.map((h) => ({ node_id: h.cell.node_id, score: h.score, distance: h.distance, layer: h.cell.layer, source_kind: h.cell.source_kind, source_id: h.cell.source_id, type: h.cell.type, title: h.cell.title, commit_sha: h.cell.commit_sha, files: h.cell.files, ...(h.origin ? { origin: h.origin.store, shared_by: h.origin.shared_by } : {}) })));
      } else if (hits.length === 0) {
        io.stdout.write(`No matches in '${scope.project}'.\n`);
      } else {
        for (const h of hits) {
          const sha = h.cell.commit_sha ? ` ${h.cell.commit_sha.slice(0, 10)}` : '';
          const team = h.origin?.store === 'team' ? `  [team, shared by ${h.origin.shared_by ?? 'unknown'}]` : '';
          io.stdout.write(`${h.score.toFixed(2)}  ${h.cell.node_id}  ${h.cell.source_kind}/${h.cell.source_id}${sha}  ${cutText(h.cell.title.replace(/\s+/g, ' '), 100)}${team}\n`);
        }
      }
      return 0;
    } finally {
      await engine.close();
    }
  },
};

export const statsCommand: CommandImpl = {
  name: 'stats',
  async run({ options, values, io }) {
    const scope = allProjects(values) ? null : await resolveScope(options);
    const engine = await openEngine(options, io, false);
    try {
      // Opened without its embedder (stats never embeds): name the one given, as a server with it would.
      const counted = await engine.stats(scope);
      const s = { ...counted, embedder: { ...counted.embedder, name: embedderName(options.embedding) } };
      if (options.json) writeJson(io, s);
      else
        io.stdout.write(
          `store        ${s.store_uri}\n${scope ? `project      ${scope.project}\n` : `projects     ${s.projects.join(', ') || '(none)'}\n`}` +
            `observations ${s.observations}\nsummaries    ${s.session_summaries}\nmemories     ${s.memories}\ncells        ${s.cells} (${s.cells_with_vectors} with vectors)\n` +
            `vectors      ${Object.entries(s.vector_models).map(([m, n]) => `${m} ${n}`).join(', ') || '(none)'} (${s.embedder.dimension} dims)\nschema       v${s.schema_version}${s.ann_index ? '\nann index    yes' : ''}\n`,
        );
      return 0;
    } finally {
      await engine.close();
    }
  },
};
