import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import type { ImportReport } from '../../src/core/store/portability';
import { filesContaining } from './diskFixture';


async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const l of lines) yield l;
}

describe('store: JSON Lines export and import', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const open = async (): Promise<MemoryEngine> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-jsonl-'));
    dirs.push(dir);
    return MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  };
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('round-trips observations, summaries, memories and the graph', async () => {
    const scope = { project: 'acme/app', branch: 'main' };
    const source = await open();
    const session = await source.currentSessionId(scope);
    const obs = await source.observe(
      [
        { type: 'edit', title: 'Split the ledger module', files_modified: ['src/ledger.ts', 'src/ledgerIo.ts'], facts: ['ledger split in two'], concepts: ['ledger'], search_extra: 'extraterm' },
        { type: 'note', title: 'We decided to use zod for validation', narrative: 'Decided to use zod for request validation.' },
      ],
      scope,
    );
    await source.endSession(scope, session, 'request');
    const memory = await source.remember({ title: 'Validation', text: 'Use zod for validation.', memory_type: 'decision', topic_key: 'validation' }, scope);
    await source.observe([{ type: 'note', title: 'another project note' }], { project: 'other' });

    await source.addPrompt(scope, session, 'Split the ledger, please');
    const lines: string[] = [];
    const written = await source.exportJsonl((l) => lines.push(l), null);
    assert.equal(lines.length, written + 1);
    const header = JSON.parse(lines[0]);
    assert.equal(header.kind, 'code-memory-export');

    const scoped: string[] = [];
    await source.exportJsonl((l) => scoped.push(l), { project: 'other' });
    assert.ok(scoped.slice(1).every((l) => JSON.parse(l).record.project === 'other'));

    const target = await open();
    const imported = await target.importJsonl(linesOf(lines));
    assert.equal(imported, written);
    const again: string[] = [];
    await target.exportJsonl((l) => again.push(l), null);
    const body = (ls: string[]): unknown[] => ls.slice(1).map((l) => JSON.parse(l)).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    assert.deepEqual(body(again), body(lines));

    // The imported store is searchable and hydrates nodes.
    const hits = await target.search('ledger', { scope });
    assert.equal(hits[0].cell.source_id, obs[0].id);
    assert.equal((await target.search('extraterm', { scope })).length, 1);
    assert.equal((await target.getMemories([memory.id], scope))[0].temporal_facts?.[0].object, 'zod');
    assert.equal((await target.listSessions(scope))[0].summary?.memory_session_id, session);
    assert.deepEqual(await target.recentPrompts(scope, session, 5), ['Split the ledger, please']);
    assert.ok(!scoped.some((l) => JSON.parse(l).kind === 'session_prompt'), 'prompts have no project: not in a project export');
    // Importing the same file twice changes nothing and says so (graph and prompt lines too, which
    // replace their own rows); new ids stay above the imported ones.
    const reports: ImportReport[] = [];
    assert.equal(await target.importJsonl(linesOf(lines), { onReport: (r) => reports.push(r) }), 0);
    assert.deepEqual(reports, [{ imported: 0, already_there: written, other_projects: 0 }]);
    assert.equal((await target.stats(null)).observations, (await source.stats(null)).observations);
    const [next] = await target.observe([{ type: 'note', title: 'fresh after import' }], scope);
    const records = body(lines) as { kind: string; record: { id?: number } }[];
    const maxImported = Math.max(...records.filter((r) => ['observation', 'session_summary', 'memory'].includes(r.kind)).map((r) => Number(r.record.id)));
    assert.ok(next.id > maxImported, `${next.id} <= ${maxImported}`);
    await source.close();
    await target.close();
  });

  it('redacts every text of an imported record before it is stored, as capture does', async () => {
    // An export can be written by hand or by a build with fewer rules: what it holds is redacted
    // here, identifiers digested (the same session id still groups the same records).
    const project = 'acme/imported';
    const at = 1_704_067_200_000;
    const base = { project, status: 'active', created_at: new Date(at).toISOString(), created_at_epoch: at };
    const secretSession = 'session-token=Zq9SessionSecretValue';
    const lines = [
      { kind: 'observation', record: { ...base, id: 1, memory_session_id: secretSession, type: 'note', title: 'deploy with AKIAZQ9IMPORTKEY1234', narrative: 'export DB_PASSWORD=Zq9importedSecretValue', facts: JSON.stringify(['the api_key="Zq9FactSecretValue" works']) } },
      { kind: 'observation', record: { ...base, id: 2, memory_session_id: secretSession, type: 'note', title: 'second of the session' } },
      { kind: 'memory', record: { ...base, id: 3, title: 'token', text: 'use ghp_Zq9ImportedGithubToken0123456789abcd', memory_type: 'note', updated_at_epoch: at, scope: 'project', classification: 'note', classification_reason: 'saved explicitly', current_context_eligible: false } },
      { kind: 'session_prompt', record: { project, session_id: secretSession, prompt: 'my password="Zq9PromptSecretValue"', created_at_epoch: Date.now() } },
    ].map((l) => JSON.stringify(l));
    const engine = await open();
    assert.equal(await engine.importJsonl(linesOf(['{"kind":"code-memory-export","schema_version":2}', ...lines])), 4);
    const [first, second] = await engine.getObservations([1, 2], { project });
    assert.match(first.narrative ?? '', /DB_PASSWORD=\[REDACTED\]/);
    assert.equal(first.memory_session_id, second.memory_session_id, 'one session still');
    await engine.close();
    const dir = dirs[dirs.length - 1];
    const leaked = ['AKIAZQ9IMPORTKEY1234', 'Zq9importedSecretValue', 'Zq9FactSecretValue', 'Zq9ImportedGithubToken', 'Zq9PromptSecretValue', 'Zq9SessionSecretValue'].filter((x) => filesContaining(dir, x).length > 0);
    assert.deepEqual(leaked, []);
  });

  it('rejects a broken line with its line number', async () => {
    const engine = await open();
    await assert.rejects(engine.importJsonl(linesOf(['{"kind":"code-memory-export","schema_version":2}', 'not json'])), /line 2/);
    await assert.rejects(engine.importJsonl(linesOf(['{"kind":"code-memory-export","schema_version":99}'])), /schema version 99/);
    await engine.close();
  });
});
