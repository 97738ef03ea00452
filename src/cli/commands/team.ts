// The team store from the command line: share (with a preview of exactly what leaves the
// machine), unshare, and the store's state with what is shared.

import type { MemoryEngineApi } from '../../core/api';
import type { Scope, SourceKind } from '../../core/model/records';
import type { SharePreview } from '../../core/team/shareRows';
import type { TeamStatus } from '../../core/team/teamMemory';
import { queuedReason } from '../../core/team/queuedReason';
import type { CommandImpl } from '../command';
import { openEngine, resolveScope, writeJson } from '../context';
import { UsageError } from '../options';
import type { GlobalOptions, Io } from '../options';
import { cutText } from '../../core/tokens';
import { wholeNumber } from '../wholeNumber';

function record(values: Record<string, unknown>): { kind: SourceKind; id: number } | null {
  const given = (['memory', 'summary'] as const).filter((k) => values[k] !== undefined);
  if (given.length > 1) throw new UsageError('give --memory or --summary, not both');
  if (given.length === 0) return null;
  const id = wholeNumber(values[given[0]], 1, Number.MAX_SAFE_INTEGER);
  if (id === undefined) throw new UsageError(`--${given[0]} must be a positive integer id`);
  return { kind: given[0] === 'memory' ? 'memory' : 'session_summary', id };
}

function needTeam(options: GlobalOptions): void {
  if (!options.teamStore) throw new UsageError('no team store: give --team-store s3://bucket/prefix (or set CODE_MEMORY_TEAM_STORE)');
}

async function withEngine(options: GlobalOptions, io: Io, withEmbedder: boolean, fn: (engine: MemoryEngineApi, scope: Scope) => Promise<number>): Promise<number> {
  needTeam(options);
  const scope = await resolveScope(options);
  const engine = await openEngine(options, io, withEmbedder);
  try {
    return await fn(engine, scope);
  } finally {
    await engine.close();
  }
}

export function previewText(p: SharePreview): string {
  return [
    `project    ${p.project}`,
    `shared by  ${p.shared_by}`,
    `record     ${p.origin} (layer ${p.layer}, ${p.type})`,
    ...(p.branch ? [`branch     ${p.branch}`] : []),
    ...(p.files.length ? [`files      ${p.files.join(', ')}`] : []),
    `title      ${p.title}`,
    '',
    p.text,
    '',
    '(plus the search words of this text and its vector)',
  ].join('\n');
}

function statusLine(s: TeamStatus): string {
  return `team store ${s.uri}: ${s.state}${s.pending ? `, ${s.pending} write(s) queued` : ''}${s.message ? ` (${s.message})` : ''}`;
}

export const shareCommand: CommandImpl = {
  name: 'share',
  run({ options, values, io }) {
    const target = record(values);
    if (!target) throw new UsageError('give --memory <id> or --summary <id>');
    return withEngine(options, io, Boolean(values.yes), async (engine, scope) => {
      if (!values.yes) {
        const preview = await engine.previewShare(target.kind, target.id, scope);
        if (options.json) writeJson(io, { preview, shared: false });
        else io.stdout.write(`This would leave the machine:\n\n${previewText(preview)}\n\nRun again with --yes to share it.\n`);
        return 0;
      }
      const result = await engine.share(target.kind, target.id, scope);
      if (options.json) writeJson(io, result);
      else io.stdout.write(`${result.delivery === 'sent' ? 'Shared' : `Queued (${queuedReason(result.status)})`}: ${result.preview.title}\nteam node ${result.preview.node_id}\n${statusLine(result.status)}\n`);
      return 0;
    });
  },
};

export const unshareCommand: CommandImpl = {
  name: 'unshare',
  run({ options, values, io }) {
    const target = record(values);
    const node = values.node as string | undefined;
    if (!target && !node) throw new UsageError('give --memory <id>, --summary <id> or --node <team-node-id>');
    return withEngine(options, io, false, async (engine, scope) => {
      const result = await engine.unshare(node ? { node_id: node } : { kind: target!.kind, id: target!.id }, scope);
      if (options.json) writeJson(io, result);
      else io.stdout.write(`${result.delivery === 'sent' ? 'Unshared' : `Unshare queued (${queuedReason(result.status)})`}: team node ${result.node_id}\n${statusLine(result.status)}\n`);
      return 0;
    });
  },
};

export const teamCommand: CommandImpl = {
  name: 'team',
  run({ options, io }) {
    return withEngine(options, io, false, async (engine, scope) => {
      let error: string | null = null;
      await engine.syncTeam().catch((e: unknown) => (error = e instanceof Error ? e.message : String(e)));
      const status = (await engine.teamStatus()) as TeamStatus;
      const items = await engine.listShared(scope);
      if (options.json) writeJson(io, { status, items });
      else {
        io.stdout.write(`${statusLine(status)}\n${items.length} shared item(s) in ${scope.project}${status.state === 'online' ? '' : ' (from the local cache)'}\n`);
        for (const i of items) io.stdout.write(`  ${i.node_id}  ${new Date(i.shared_at_epoch).toISOString().slice(0, 10)}  ${i.shared_by}  ${cutText(i.title.replace(/\s+/g, ' '), 80)}\n`);
      }
      return error && status.state === 'refused' ? 1 : 0;
    });
  },
};
