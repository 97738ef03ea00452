// Bounds a caller cannot push past: a refusal of very many unknown arguments stays short (and so
// does its request-log record), and a recall_context Reference line stays one line however the
// agent splits lines.
import * as assert from 'node:assert/strict';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import type { CallResult } from './httpToolHarness';
import { seed } from './mcpFixture';
import { textPack } from './textPack';

describe('many unknown arguments (HTTP): a short refusal, a short request-log record', function () {
  this.timeout(300_000);
  const h = httpToolHarness({ fill: async (engine) => void (await seed(engine, SCOPE, OTHER)) });

  for (const [name, base] of [['retrieve_memory', { prompt: 'vector store' }], ['recall_context', { query: 'vector store' }], ['recall', { text: 'vector store' }], ['get_observations', { ids: [1] }]] as const) {
    it(`${name}: 40,000 unknown keys are refused with a message naming the first 10 and how many more`, async () => {
      const args: Record<string, unknown> = { ...base };
      for (let i = 0; i < 40_000; i++) args[`k${i}`] = i;
      const r = (await h.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallResult;
      assert.equal(r.isError, true);
      assert.match(r.content[0].text!, /^invalid_arguments: unknown argument\(s\) 'k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9', and 39990 more(\. Only .*)?$/);
    });
  }

  it('retrieve_memory: the request-log record of a call with 40,000 unknown keys stays bounded', async () => {
    const args: Record<string, unknown> = { prompt: 'vector store', session_id: 'many-keys' };
    for (let i = 0; i < 40_000; i++) args[`key${i}`] = i;
    const r = (await h.client.callTool({ name: 'retrieve_memory', arguments: args }, undefined, { timeout: 120_000 })) as CallResult;
    assert.equal(r.structuredContent?.error_code, 'invalid_arguments');
    const res = await fetch(`${new URL(h.server.url).origin}/v1/dev/mcp-requests?limit=5`, { headers: { Authorization: `Bearer ${h.server.token}` } });
    const { requests } = (await res.json()) as { requests: Array<Record<string, unknown>> };
    const entry = requests.find((e) => String(e.arguments).includes('many-keys'))!;
    assert.ok(entry, 'not logged');
    const names = new Set([...`${String(entry.arguments)} ${String(entry.response)}`.matchAll(/key\d+/g)].map((m) => m[0]));
    assert.ok(names.size <= 200, `the record names ${names.size} of the unknown keys (${String(entry.response).length} characters of response)`);
  });
});

// Python's str.splitlines() (what an agent written in Python reads the text pack with) breaks at
// these besides \n and \r: \v \f \x1c \x1d \x1e \x85 \u2028 \u2029.
// eslint-disable-next-line no-control-regex -- the separators themselves are what is tested
const UNIVERSAL_NEWLINE = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

describe('recall_context: Reference lines under every line-splitting rule', function () {
  this.timeout(300_000);
  const h = httpToolHarness({
    fill: async (engine) => {
      await engine.observe(
        [
          { type: 'edit', title: 'Okapi parser edit one', narrative: 'Okapi parser handles odd paths.', files_modified: ['src/okapi\u0085next.ts'] },
          { type: 'edit', title: 'Okapi parser edit two', narrative: 'Okapi parser handles odd paths too.', files_modified: ['src/okapi\u001cgroup.ts', 'src/okapi\u001erecord.ts'] },
          { type: 'edit', title: 'Okapi parser edit three', narrative: 'Okapi parser handles separators.', files_modified: ['src/okapi\u2028line.ts'] },
        ],
        SCOPE,
      );
      await engine.flush();
    },
  });

  it('each item is exactly one Reference line when the text is split at universal newlines', async () => {
    const r = (await h.client.callTool({ name: 'recall_context', arguments: { query: 'okapi parser odd paths separators' } })) as CallResult;
    assert.equal(r.isError, false, r.content[0].text);
    const n = textPack(r).used_items;
    assert.ok(n >= 3, `items ${n}`);
    const text = r.content[0].text!;
    const header = text.slice(0, text.indexOf('\nContext:\n'));
    const lines = header.split(UNIVERSAL_NEWLINE);
    const refs = lines.filter((l) => l.startsWith('Reference: '));
    assert.equal(refs.length, n);
    for (const ref of refs) assert.match(ref, /^Reference: [^|]+ \| Type: [^|]+ \| Location: [^|]+$/);
    // Between "Items:" and "Context:" there is nothing but the Budget line and the Reference lines.
    const stray = lines.slice(2).filter((l) => !l.startsWith('Reference: ') && !l.startsWith('Budget: '));
    assert.deepEqual(stray, [], 'Reference lines broken apart by a line separator in a Location');
  });
});

describe('recall and recall_context: asking for more never reorders the first answers', function () {
  this.timeout(300_000);
  const topics = ['vector store LanceDB embedded', 'retry policy exponential backoff', 'tokenizer o200k budget', 'dark mode theme toggle', 'CSV parser import wizard', 'Kafka consumer lag'];
  const h = httpToolHarness({
    fill: async (engine) => {
      await seed(engine, SCOPE, OTHER);
      await engine.observe(
        Array.from({ length: 80 }, (_, i) => ({ type: 'note', title: `${topics[i % 6]} ${i}`, narrative: `${topics[(i * 7) % 6]} and ${topics[(i * 5 + 1) % 6]} ${'filler words here '.repeat(i % 7)}` })),
        SCOPE,
      );
      await engine.flush();
      await engine.waitForVectors();
    },
  });
  const queries = ['LanceDB vector store', 'exponential backoff retry', 'which vector store did we pick?'];

  it('recall with k nodes answers the first k of k = 200, at the same distances, nearest first', async () => {
    const recall = async (text: string, k: number) => ((await h.client.callTool({ name: 'recall', arguments: { text, k } })) as CallResult).structuredContent!.nodes as Array<{ node_id: string; distance: number }>;
    for (const text of queries) {
      const all = await recall(text, 200);
      assert.ok(all.length > 60, `control: ${all.length} nodes for k = 200`);
      assert.deepEqual(
        all.map((n) => n.distance),
        [...all.map((n) => n.distance)].sort((a, b) => a - b),
        `${text}: nearest first`,
      );
      for (const k of [1, 5, 10, 30, 50, 60, 100]) assert.deepEqual(await recall(text, k), all.slice(0, k), `${text}, k = ${k}`);
    }
  });

  it('recall_context with max_items m packs the first m items of max_items 50', async () => {
    const refs = async (query: string, max_items: number) =>
      textPack((await h.client.callTool({ name: 'recall_context', arguments: { query, max_items, max_tokens: 12000 } })) as CallResult).items.map((i) => i.reference);
    for (const query of queries) {
      const all = await refs(query, 50);
      for (const m of [1, 5, 12, 30]) assert.deepEqual(await refs(query, m), all.slice(0, m), `${query}, max_items = ${m}`);
    }
  });
});
