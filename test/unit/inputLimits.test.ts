// Inputs at the edges of what the store and the tools take: ids near 2^53 (an import and the id
// allocator), text whose tokenization was quadratic (one long run of a letter), a dedupe key
// given twice in one call, arguments nested too deep to stringify, and recall's k beyond 2^53.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encode } from 'gpt-tokenizer';
import * as z from 'zod/v4';
import type { MemoryEngine } from '../../src/core/engine';
import { IdSpaceError, LocalBlockAllocator, MAX_KEPT_ID } from '../../src/core/store/ids';
import { countTokens, truncateToTokens } from '../../src/core/tokens';
import { splitIdentifier } from '../../src/core/retrieve/textPrep';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { recallInput } from '../../src/core/tools/recall';
import { findTool } from '../../src/core/tools/registry';
import type { ToolResult } from '../../src/core/tools/types';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const l of lines) yield l;
}

const AT = 1_767_225_600_000;
const SESSION = { memory_session_id: 's-limits', status: 'active', created_at: new Date(AT).toISOString(), created_at_epoch: AT };

describe('input limits', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  beforeEach(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  afterEach(async () => {
    await engine.close();
    removeDir(dir);
  });

  async function call(name: string, args: unknown, scope = { project: 'limits' }): Promise<ToolResult> {
    const tool = findTool(name);
    assert.ok(tool, name);
    return tool.run(toolContext(engine, scope), args);
  }

  describe('ids near 2^53', () => {
    it('an import keeps ids up to 2^52 and renumbers larger ones (references following), so later ids stay unique and safe', async () => {
      const scope = { project: 'big-ids' };
      const top = Number.MAX_SAFE_INTEGER - 1; // as an export of a store on object storage may hold (random blocks up to 2^53)
      const memory = (id: number, title: string, extra: Record<string, unknown>): string =>
        JSON.stringify({
          kind: 'memory',
          record: { project: scope.project, id, title, text: `${title} text`, memory_type: 'decision', created_at_epoch: AT, updated_at_epoch: AT, status: 'active', scope: 'project', classification: 'decision', classification_reason: 'saved explicitly', current_context_eligible: true, ...extra },
        });
      const trace = { id: top, topic_key: 'db', title: 't', summary: 's', status: 'active', segment_index: 0, covered_from_event_id: top, covered_to_event_id: top, evidence_event_ids: [top], files: null, created_at_epoch: AT, updated_at_epoch: AT };
      const lines = [
        JSON.stringify({ kind: 'code-memory-export', schema_version: 4 }),
        JSON.stringify({ kind: 'observation', record: { ...SESSION, project: scope.project, id: MAX_KEPT_ID, type: 'note', title: 'Kept at the bound' } }),
        JSON.stringify({ kind: 'observation', record: { ...SESSION, project: scope.project, id: top, type: 'note', title: 'Above the bound' } }),
        memory(top - 1, 'Older decision', { status: 'superseded', superseded_by: top }),
        memory(top, 'Newer decision', { supersedes: JSON.stringify([top - 1]), topic_trace: JSON.stringify([trace]) }),
      ];
      assert.equal(await engine.importJsonl(linesOf(lines)), 4);
      const imported = await engine.listObservations(scope, { limit: 10 });
      const kept = imported.find((o) => o.title === 'Kept at the bound')!;
      const above = imported.find((o) => o.title === 'Above the bound')!;
      assert.equal(kept.id, MAX_KEPT_ID, 'an id up to 2^52 is kept');
      assert.ok(above.id > MAX_KEPT_ID && above.id < MAX_KEPT_ID + 1_000, `an id above 2^52 gets a fresh one: ${above.id}`);
      const memories = await engine.listMemories(scope, { includeSuppressed: true });
      const older = memories.find((m) => m.title === 'Older decision')!;
      const newer = memories.find((m) => m.title === 'Newer decision')!;
      assert.ok(older.id <= MAX_KEPT_ID + 1_000 && newer.id <= MAX_KEPT_ID + 1_000, `${older.id} ${newer.id}`);
      assert.deepEqual([older.superseded_by, newer.supersedes], [newer.id, [older.id]]);
      assert.deepEqual(newer.topic_trace?.map((t) => [t.id, t.covered_from_event_id, t.evidence_event_ids]), [[newer.id, above.id, [above.id]]]);

      for (const t of ['one', 'two', 'three']) await engine.observe([{ type: 'edit', title: `After the import ${t}` }], scope);
      const ids = (await engine.listObservations(scope, { limit: 100 })).map((o) => o.id);
      assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids.join(', ')}`);
      for (const id of ids) assert.ok(Number.isSafeInteger(id) && id <= MAX_KEPT_ID + 1_000, `id ${id}`);
      // The same file again: every record is found, by id or content, and nothing is added.
      assert.equal(await engine.importJsonl(linesOf(lines)), 0);
      assert.equal((await engine.listObservations(scope, { limit: 100 })).length, 5);
    });

    it('the local allocator never hands out an id above Number.MAX_SAFE_INTEGER: a claim past it, or a reservation above 2^52, is refused and writes nothing', async () => {
      const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ids-limit-'));
      try {
        const counter = path.join(folder, 'ids.next');
        const read = (): string => fs.readFileSync(counter, 'utf8');
        // Room for 300 more ids: a block of 256 fits, the next does not.
        fs.writeFileSync(counter, String(Number.MAX_SAFE_INTEGER - 300));
        const alloc = new LocalBlockAllocator(folder, async () => 1, 256);
        const first = await alloc.allocate(256);
        assert.equal(first[255], Number.MAX_SAFE_INTEGER - 45);
        assert.equal(read(), String(Number.MAX_SAFE_INTEGER - 44));
        await assert.rejects(alloc.allocate(1), (e: Error) => e instanceof IdSpaceError && /no ids left.*9007199254740991.*Nothing was written/s.test(e.message));
        assert.equal(read(), String(Number.MAX_SAFE_INTEGER - 44), 'the counter did not move');
        // A counter that says more than ids can hold (an older build wrote it) starts above the
        // stored ids; stored ids that high are refused too.
        fs.writeFileSync(counter, String(2 ** 53 + 256));
        await assert.rejects(new LocalBlockAllocator(folder, async () => Number.MAX_SAFE_INTEGER, 16).allocate(1), IdSpaceError);
        assert.equal(read(), String(2 ** 53 + 256));

        // Another store (this process's blocks above reach past any id of that folder): a counter at 100.
        const other = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ids-limit-'));
        try {
          const otherCounter = path.join(other, 'ids.next');
          fs.writeFileSync(otherCounter, '100');
          const importer = new LocalBlockAllocator(other, async () => 1, 16);
          await assert.rejects(importer.reserve([200, Number.MAX_SAFE_INTEGER - 1]), (e: Error) => e instanceof IdSpaceError && /1 to 4503599627370496/.test(e.message));
          await assert.rejects(importer.ensureAtLeast(2 ** 53), IdSpaceError);
          assert.equal(fs.readFileSync(otherCounter, 'utf8'), '100', 'nothing was reserved');
          assert.deepEqual(await importer.reserve([200, MAX_KEPT_ID]), [100, MAX_KEPT_ID + 1]);
          const after = await importer.allocate(2);
          assert.deepEqual(after, [MAX_KEPT_ID + 1, MAX_KEPT_ID + 2]);
        } finally {
          fs.rmSync(other, { recursive: true, force: true });
        }
      } finally {
        fs.rmSync(folder, { recursive: true, force: true });
      }
    });
  });

  describe('token counts of one long run of a letter', () => {
    // The tokenizer's own count of a shorter run, scaled: a run of one letter tokenizes in a
    // repeating pattern, so the megabyte's count is this within a fraction of a percent.
    const scaled = (ch: string, chars: number): number => (encode(ch.repeat(8_000)).length * chars) / 8_000;
    const close = (got: number, expected: number, what: string): void => assert.ok(Math.abs(got - expected) <= expected * 0.01, `${what}: counted ${got}, expected about ${expected}`);

    it('counts a megabyte of one letter (mocha timeout as the guard), within 1% of the tokenizer, and ordinary text around it exactly', () => {
      const mb = 1_000_000;
      for (const ch of ['A', 'a', '=', '\n', ' ']) close(countTokens(ch.repeat(mb)), scaled(ch, mb), JSON.stringify(ch));
      const prose = 'The retry policy backs off exponentially, with jitter; see src/net/retryPolicy.ts and https://example.com/docs/retry?x=1.';
      close(countTokens(`${prose} ${'A'.repeat(mb)} ${prose}`), scaled('A', mb) + 2 * encode(prose).length, 'prose around a run');
      // Text without a word longer than 128 characters (long lines of paths and URLs without a
      // space, CJK, runs of blank lines) counts as the tokenizer counts it.
      const ordinary = [
        Array.from({ length: 60 }, (_, i) => `src/module${i}/file${i}.ts`).join(','),
        '日本語のテキストと絵文字😀🚀。'.repeat(40),
        `${'\n'.repeat(100)}${' \t'.repeat(60)}x`,
        Array.from({ length: 40 }, (_, i) => `https://example.com/path/${i}?q=${i}`).join(''),
      ].join(' ');
      assert.equal(countTokens(ordinary), encode(ordinary).length);
    });

    it('truncates a megabyte of one letter to a prefix within its budget', () => {
      for (const ch of ['A', 'q']) {
        const run = `${ch.repeat(1_000_000)} tail`;
        const cut = truncateToTokens(run, 400);
        assert.ok(run.startsWith(cut), 'a prefix');
        const n = countTokens(cut);
        assert.ok(n <= 400 && n >= 390, `${ch}: ${n} tokens`);
        const two = truncateToTokens(`head ${run}`, 2);
        assert.ok(two.startsWith('head') && `head ${run}`.startsWith(two) && countTokens(two) <= 2, JSON.stringify(two));
      }
      const wide = `words first ${'😀'.repeat(50_000)}`;
      const cut = truncateToTokens(wide, 300);
      assert.ok(wide.startsWith(cut) && !cut.endsWith('\ufffd') && !/[\ud800-\udbff]$/.test(cut), 'no half of a character at the end');
      assert.ok(countTokens(cut) <= 300);
    });

    it('observe and retrieve_memory of a record whose narrative is 300,000 characters of one letter answer (mocha timeout as the guard)', async function () {
      this.timeout(20_000);
      // As capture and a git import store a long commit message (the observe tool takes 20,000 characters).
      const narrative = `Quokka separator line ${'a'.repeat(300_000)}`;
      await engine.observe([{ type: 'note', title: 'Quokka separator line', narrative }], { project: 'limits' });
      const [obs] = await engine.listObservations({ project: 'limits' }, { limit: 1 });
      close(obs.discovery_tokens ?? 0, scaled('a', 300_000), 'discovery_tokens');
      await engine.flush();
      const r = await call('retrieve_memory', { prompt: 'quokka separator line' });
      assert.equal(r.isError, false, r.text.slice(0, 300));
      assert.ok((r.structured as { phase1: { estimated_tokens: number } }).phase1.estimated_tokens > 0);
    });
  });

  describe('dedupe keys within one call', () => {
    it('a dedupe_key given twice in one observe call is stored once, the repeat answered as a later call\'s repeat is (the stored id)', async () => {
      const first = await call('observe', {
        observations: [
          { type: 'note', title: 'Twin one', dedupe_key: 'twin' },
          { type: 'note', title: 'Single', dedupe_key: 'single' },
          { type: 'note', title: 'Twin two', dedupe_key: 'twin' },
          { type: 'note', title: 'Twin three', dedupe_key: 'twin' },
        ],
      });
      assert.equal(first.isError, false, first.text);
      const { stored, ids } = first.structured as { stored: number; ids: number[] };
      // `stored` counts the observations written, not the entries answered.
      assert.equal(stored, 2);
      assert.equal(new Set([ids[0], ids[2], ids[3]]).size, 1, `twins answered with one id: ${ids.join(', ')}`);
      assert.notEqual(ids[1], ids[0]);
      const titles = (await engine.listObservations({ project: 'limits' }, { limit: 100 })).map((o) => o.title).sort();
      assert.deepEqual(titles, ['Single', 'Twin one']);
      // The same key in a later call: the same answer.
      const again = await call('observe', { observations: [{ type: 'note', title: 'Twin four', dedupe_key: 'twin' }] });
      assert.deepEqual((again.structured as { ids: number[] }).ids, [ids[0]]);
      // Twins whose first folds into a near-duplicate in the same call: both answered with it.
      const near = await engine.observe(
        [
          { type: 'note', title: 'Single', memory_session_id: 'near' },
          { type: 'note', title: 'Single', memory_session_id: 'near', dedupe_key: 'near-twin' },
          { type: 'note', title: 'Other', memory_session_id: 'near', dedupe_key: 'near-twin' },
        ],
        { project: 'limits' },
      );
      assert.equal(near[1].id, near[2].id);
      assert.equal((await engine.listObservations({ project: 'limits' }, { limit: 100 })).filter((o) => o.title === 'Other').length, 0);
    });
  });

  describe('request log of odd arguments', () => {
    it('retrieve_memory with an argument nested 20,000 deep is refused and logged, bounded and redacted', async () => {
      const depth = 20_000;
      const secret = `ghp_${'Zq9aB'.repeat(7)}x`;
      const args = JSON.parse(`{"prompt":"wombat","note":["a token ${secret}"],"password":"hunter2-horse","junk":${'['.repeat(depth)}${']'.repeat(depth)}}`) as Record<string, unknown>;
      const scope = { project: 'deep-args' };
      const r = await call('retrieve_memory', args, scope);
      assert.match(r.text, /^invalid_arguments: /);
      const [entry] = await engine.listRequests(scope, 10);
      assert.ok(entry, 'the call left no request-log entry');
      const logged = JSON.parse(entry.arguments) as Record<string, unknown>;
      assert.equal(logged.prompt, 'wombat');
      assert.match(JSON.stringify(logged.junk), /not logged: a list nested deeper than 8 levels/);
      assert.ok(entry.arguments.length < 1_000, entry.arguments);
      assert.ok(!entry.arguments.includes('Zq9aB') && !entry.arguments.includes('hunter2'), entry.arguments);
    });

    it('retrieve_memory logs a huge unknown argument cut short, redacted before the cut (a secret at the cut does not leak)', async () => {
      const scope = { project: 'long-args' };
      const secret = `ghp_${'Zq9aB'.repeat(7)}x`;
      const junk = `${'x '.repeat(7_995)}${secret} ${'y'.repeat(300_000)}`;
      const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`key${i}`, i]));
      const r = await call('retrieve_memory', { prompt: 'wombat', junk, wide, ['k'.repeat(300)]: 'value under a long key' }, scope);
      assert.match(r.text, /^invalid_arguments: /);
      const [entry] = await engine.listRequests(scope, 10);
      assert.ok(entry.arguments.length < 40_000, `${entry.arguments.length} characters logged`);
      assert.ok(!entry.arguments.includes('Zq9aB'), 'a piece of the secret was logged');
      const logged = JSON.parse(entry.arguments) as Record<string, unknown>;
      assert.equal(logged.prompt, 'wombat');
      assert.match(String(logged.junk), /cut: 316\d+ characters/);
      assert.equal(Object.keys(logged.wide as object).length, 101);
      // A valid call is logged whole, as it was.
      const prompt = 'which retry policy did we pick? '.repeat(200).slice(0, 6_000);
      await call('retrieve_memory', { prompt, session_id: 's-1' }, scope);
      const valid = (await engine.listRequests(scope, 10)).find((e) => e.arguments.includes('"session_id":"s-1"'));
      assert.equal(valid?.arguments, JSON.stringify({ prompt, session_id: 's-1' }));
    });
  });

  describe('recall k', () => {
    it('serves any whole k from 1 (beyond 2^53 and 1e300 too) as at most 200, refuses the rest, and publishes no maximum', async () => {
      await engine.observe(Array.from({ length: 3 }, (_, i) => ({ type: 'note', title: `Numbat ${i}` })), { project: 'limits' });
      await engine.flush();
      for (const k of [1, 200, 201, 2 ** 53, 2 ** 60, 1e300, Number.MAX_VALUE]) {
        const r = await call('recall', { text: 'numbat', k });
        assert.equal(r.isError, false, `k=${k}: ${r.text}`);
        const nodes = (r.structured as { nodes: unknown[] }).nodes;
        assert.equal(nodes.length, Math.min(k, 3), `k=${k}`);
      }
      assert.equal(recallInput.parse({ text: 'x', k: 1e300 }).k, 200);
      assert.equal(recallInput.parse({ text: 'x' }).k, 10);
      for (const k of [0, -1, 0.5, 1.5, 200.5, Infinity, -Infinity, NaN, '5', null]) {
        const r = await call('recall', { text: 'numbat', k });
        assert.match(r.text, /^invalid_arguments: k/, `k=${String(k)}: ${r.text}`);
      }
      const schema = z.toJSONSchema(recallInput, { io: 'input', target: 'draft-7' }) as { properties: Record<string, Record<string, unknown>> };
      const { description, ...k } = schema.properties.k;
      assert.match(String(description), /at most 200/);
      assert.deepEqual(k, { default: 10, type: 'integer', minimum: 1 });
    });
  });
});

describe('identifier splitting on a run of capitals', function () {
  // ([A-Z]+)([A-Z][a-z]) rescanned a run of capitals from each of its letters: 200,000 took
  // seconds in every index and embedding of the text. Mocha's timeout is the guard.
  this.timeout(20_000);
  it('splits a megabyte of capitals before a word as it splits HTTPServer', () => {
    assert.deepEqual(splitIdentifier('HTTPServer'), ['http', 'server']);
    const parts = splitIdentifier(`${'A'.repeat(1_000_000)}Bc`);
    assert.deepEqual([parts.length, parts[0].length, parts[1]], [2, 1_000_000, 'bc']);
  });
  it('the hashed embedder embeds a megabyte of capitals', async () => {
    const [v] = await new HashedEmbedder(64).embed([`${'Q'.repeat(1_000_000)}Rs tail`]);
    assert.equal(v.length, 64);
  });
});
