// What the CLI says, run in this process: errors name what the user gave (the URI as typed, the
// variable rather than a flag never given, a negative number's own rule), `export --out --json`
// answers in JSON, and `stats` names the embedder it was given, not the one it leaves unloaded.

import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { displayUri } from '../../src/core/store/objectStorage';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import { runMain } from './cliInProcess';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';

describe('CLI messages', function () {
  this.timeout(120_000);
  let work: string;
  let store: string;
  const where = (): string[] => ['--store', store, '--project', 'msg/p1'];

  before(async () => {
    work = tempDir('cli-messages');
    store = path.join(work, 'store');
    const { engine } = await openTestEngine(store);
    try {
      await engine.observe(
        [
          { type: 'note', title: 'walrus one', narrative: 'the first walrus note' },
          { type: 'note', title: 'walrus two', narrative: 'the second walrus note' },
        ],
        { project: 'msg/p1' },
      );
      await engine.observe([{ type: 'note', title: 'elsewhere', narrative: 'a note of another project' }], { project: 'msg/p2' });
      await engine.flush();
    } finally {
      await engine.close();
    }
  });
  after(() => removeDir(work));

  describe('an object-storage URI with a query or fragment is shown with the character given', () => {
    it("'#frag' is shown as '#***', '?query' as '?***'", async () => {
      const frag = await runMain(['stats', '--store', 's3://bucket/prefix#frag', '--project', 'p']);
      assert.equal(frag.code, 2, frag.err);
      assert.match(frag.err, /'s3:\/\/bucket\/prefix#\*\*\*' has a query or fragment/);
      assert.doesNotMatch(frag.err, /frag'|prefix\?/);
      const query = await runMain(['stats', '--store', 's3://bucket/prefix?region=x', '--project', 'p']);
      assert.equal(query.code, 2, query.err);
      assert.match(query.err, /'s3:\/\/bucket\/prefix\?\*\*\*' has a query or fragment/);
    });

    it('displayUri keeps the first of ? and # and hides what follows, credentials hidden first', () => {
      assert.equal(displayUri('s3://bucket/p#x?y'), 's3://bucket/p#***');
      assert.equal(displayUri('gs://bucket/p?x#y'), 'gs://bucket/p?***');
      assert.equal(displayUri('http://127.0.0.1:8080/v1#token=abc'), 'http://127.0.0.1:8080/v1#***');
      assert.equal(displayUri('s3://AKIA:se#cr?et@bucket/p'), 's3://***@bucket/p');
      assert.equal(displayUri('s3://bucket/p'), 's3://bucket/p');
    });
  });

  describe('a bad $CODE_MEMORY_RERANK_CANDIDATES names the variable', () => {
    const rerank = { CODE_MEMORY_RERANK_ENDPOINT: 'http://127.0.0.1:9/v1', CODE_MEMORY_EMBEDDER: 'hashed' };
    for (const given of ['500', '1']) {
      it(`CODE_MEMORY_RERANK_CANDIDATES=${given}: exit 2 naming it, not --rerank-candidates`, async () => {
        const r = await runMain(['search', 'x', ...where()], { ...rerank, CODE_MEMORY_RERANK_CANDIDATES: given });
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, new RegExp(`CODE_MEMORY_RERANK_CANDIDATES must be from 2 to 100, not ${given}`));
        assert.doesNotMatch(r.err, /--rerank-candidates/);
      });
    }

    it('the flag, given (over the variable too), is named as the flag', async () => {
      const r = await runMain(['search', 'x', ...where(), '--rerank-candidates', '500'], { ...rerank, CODE_MEMORY_RERANK_CANDIDATES: '10' });
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /--rerank-candidates must be from 2 to 100, not 500/);
    });
  });

  describe('export --out with --json', () => {
    it('writes the file and prints a JSON summary on stdout (nothing else)', async () => {
      const out = path.join(work, 'one.jsonl');
      const r = await runMain(['export', '--out', out, '--json', ...where()]);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.err, '');
      const summary = JSON.parse(r.out) as Record<string, unknown>;
      const records = readFileSync(out, 'utf8').split('\n').filter((l) => l && !l.includes('"kind":"code-memory-export"'));
      assert.deepEqual(summary, { exported: records.length, project: 'msg/p1', out: path.resolve(out) });
      assert.ok(records.length >= 2, `records: ${records.length}`);
    });

    it('--all-projects: the summary has no project', async () => {
      const out = path.join(work, 'all.jsonl');
      const r = await runMain(['export', '--out', out, '--json', '--all-projects', '--store', store]);
      assert.equal(r.code, 0, r.err);
      const summary = JSON.parse(r.out) as Record<string, unknown>;
      assert.equal(summary.project, undefined);
      assert.equal(summary.out, path.resolve(out));
      assert.ok(typeof summary.exported === 'number' && summary.exported > 0);
      assert.ok(existsSync(out));
    });

    it('without --json the count stays a line on stderr; to stdout the export is the output, --json or not', async () => {
      const out = path.join(work, 'plain.jsonl');
      const plain = await runMain(['export', '--out', out, ...where()]);
      assert.equal(plain.code, 0, plain.err);
      assert.equal(plain.out, '');
      assert.match(plain.err, /^Exported \d+ record\(s\) of 'msg\/p1'\.\n$/);
      const toStdout = await runMain(['export', '--json', ...where()]);
      assert.equal(toStdout.code, 0, toStdout.err);
      assert.match(toStdout.out.split('\n')[0], /"kind":"code-memory-export"/);
    });
  });

  describe("a negative number after a value option gets the option's own rule", () => {
    const cases: [string[], RegExp][] = [
      [['search', 'x', '--limit', '-5'], /^error: --limit must be an integer from 1 to 200/],
      [['serve', '--port', '-1'], /^error: --port must be an integer from 0 to 65535, not '-1'/],
      [['stats', '--request-log-max-rows', '-1'], /^error: --request-log-max-rows must be a whole number of at least 1, not '-1'/],
      [['stats', '--request-log-days', '-0.5'], /^error: --request-log-days must be a whole number of at least 1, not '-0.5'/],
      [['eval', '--repo', 'no-such-repo', '--queries', 'no-such-queries.jsonl', '--k', '-3'], /^error: --k must be an integer from 1 to 50/],
    ];
    for (const [args, re] of cases) {
      it(`${args.join(' ')}: exit 2 with the option's rule, as ${args.at(-2)}=${args.at(-1)} gives`, async () => {
        const r = await runMain([...args, ...where()], { CODE_MEMORY_EMBEDDER: 'hashed' });
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, re);
        const joined = await runMain([...args.slice(0, -2), `${args.at(-2)}=${args.at(-1)}`, ...where()], { CODE_MEMORY_EMBEDDER: 'hashed' });
        assert.equal(joined.code, 2, joined.err);
        assert.equal(r.err.split('\n')[0], joined.err.split('\n')[0]);
      });
    }

    it('a value that only looks like a flag is still refused by parseArgs, and a repeated flag still is', async () => {
      const flag = await runMain(['stats', '--project', '--json', '--store', store]);
      assert.equal(flag.code, 2, flag.err);
      assert.match(flag.err, /--project/);
      const twice = await runMain(['search', 'x', '--limit', '-5', '--limit', '3', ...where()]);
      assert.equal(twice.code, 2, twice.err);
      assert.match(twice.err, /--limit is given more than once/);
    });

    it('after --, a negative number is a positional; a boolean option does not take it', async () => {
      const text = await runMain(['search', ...where(), '--json', '--', '-5'], { CODE_MEMORY_EMBEDDER: 'hashed' });
      assert.equal(text.code, 0, text.err);
      assert.ok(Array.isArray(JSON.parse(text.out)));
      const bool = await runMain(['stats', '--json', '-5', '--store', store]);
      assert.equal(bool.code, 2, bool.err);
      assert.match(bool.err, /Unknown option '-5'/);
    });
  });

  describe('stats names the embedder it was given', () => {
    it('--embedder hashed (or $CODE_MEMORY_EMBEDDER=hashed): the name a server with it reports', async () => {
      const engine = await MemoryEngine.open({ storeUri: store, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
      let served: { name: string; dimension: number };
      try {
        served = (await engine.stats({ project: 'msg/p1' })).embedder;
      } finally {
        await engine.close();
      }
      const flag = await runMain(['stats', '--json', '--embedder', 'hashed', ...where()]);
      assert.equal(flag.code, 0, flag.err);
      assert.deepEqual((JSON.parse(flag.out) as { embedder: unknown }).embedder, served);
      const env = await runMain(['stats', '--json', ...where()], { CODE_MEMORY_EMBEDDER: 'hashed' });
      assert.equal(env.code, 0, env.err);
      assert.deepEqual((JSON.parse(env.out) as { embedder: unknown }).embedder, served);
    });

    it('none: none; use-lite: use-lite-512; openai: openai:<model> (nothing loaded or reached)', async () => {
      const name = async (args: string[], env: Record<string, string> = {}): Promise<string> => {
        const r = await runMain(['stats', '--json', ...where(), ...args], env);
        assert.equal(r.code, 0, r.err);
        return (JSON.parse(r.out) as { embedder: { name: string } }).embedder.name;
      };
      assert.equal(await name(['--embedder', 'none']), 'none');
      assert.equal(await name(['--embedder', 'use-lite']), 'use-lite-512');
      assert.equal(await name(['--embedder', 'openai', '--embedding-endpoint', 'http://127.0.0.1:9/v1', '--embedding-model', 'mxbai-embed-large']), 'openai:mxbai-embed-large');
    });
  });
});
