import * as assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { formatReport } from '../../src/core/eval/format';
import { firstGoldRank, latencyMetrics, percentile, rankMetrics } from '../../src/core/eval/metrics';
import { parseQuestions } from '../../src/core/eval/queries';
import { runEval } from '../../src/core/eval/runEval';
import type { EvalQuestion } from '../../src/core/eval/queries';
import { PARSER_HISTORY, makeRepo } from './gitImportFixture';

describe('retrieval evaluation', () => {
  describe('metrics', () => {
    it('ranks the first gold commit, accepting abbreviated shas', () => {
      assert.equal(firstGoldRank(['aaaa1111', 'bbbb2222', 'cccc3333'], ['bbbb']), 2);
      assert.equal(firstGoldRank(['aaaa1111'], ['ffff']), null);
      assert.equal(firstGoldRank(['aaaa1111', 'cccc3333'], ['cccc3333', 'aaaa1111']), 1);
    });

    it('computes hit@k and MRR@10', () => {
      const m = rankMetrics([1, 3, 7, null, 12]);
      assert.equal(m.n, 5);
      assert.equal(m.hit_at_1, 0.2);
      assert.equal(m.hit_at_5, 0.4);
      assert.equal(m.hit_at_10, 0.6);
      assert.ok(Math.abs(m.mrr_at_10 - (1 + 1 / 3 + 1 / 7) / 5) < 1e-12);
    });

    it('computes nearest-rank percentiles', () => {
      const ms = Array.from({ length: 20 }, (_, i) => i + 1);
      assert.equal(percentile(ms, 50), 10);
      assert.equal(percentile(ms, 95), 19);
      assert.equal(latencyMetrics([]).p95_ms, 0);
    });

    it('rejects malformed question files with the line number', () => {
      assert.throws(() => parseQuestions('{"question": "q", "gold_commits": ["abcd123"]}\nnot json\n', 'qs.jsonl'), /qs\.jsonl:2: not valid JSON/);
      assert.throws(() => parseQuestions('{"question": "q", "gold_commits": []}', 'qs.jsonl'), /gold_commits/);
      assert.equal(parseQuestions('\n{"question": "q", "gold_commits": ["abcd123"]}\n')[0].id, 'q2');
    });

    it('refuses a line that is no object, and a question longer than the tools take, naming the line', () => {
      const ok = '{"question": "q", "gold_commits": ["abcd123"]}';
      assert.throws(() => parseQuestions(`${ok}\nnull\n`, 'qs.jsonl'), /^Error: qs\.jsonl:2: null is not a question/);
      assert.throws(() => parseQuestions(`${ok}\n[]\n`, 'qs.jsonl'), /^Error: qs\.jsonl:2: a list is not a question/);
      assert.throws(() => parseQuestions(`${ok}\n7\n`, 'qs.jsonl'), /^Error: qs\.jsonl:2: a number is not a question/);
      const long = (question: string): string => JSON.stringify({ question, gold_commits: ['abcd123'] });
      assert.throws(() => parseQuestions(`${ok}\n${long('w'.repeat(8001))}\n`, 'qs.jsonl'), /qs\.jsonl:2: "question" is longer than 8,000 characters/);
      // Characters, as the tools count them: 8,000 emoji are 16,000 UTF-16 units.
      assert.equal(parseQuestions(long('\u{1F600}'.repeat(8000)))[0].question.length, 16_000);
      assert.throws(() => parseQuestions(long('\u{1F600}'.repeat(8001))), /longer than 8,000 characters/);
    });
  });

  describe('end to end on a repository the test creates', function () {
    this.timeout(120_000);
    let repo: string;
    let shas: string[];

    before(() => {
      ({ repo, shas } = makeRepo(PARSER_HISTORY));
    });

    after(() => rmSync(repo, { recursive: true, force: true }));

    it('imports the history, asks every tool and scores the ranks', async () => {
      const questions: EvalQuestion[] = [
        { id: 'q1', question: 'Where do option defaults come from environment variables?', gold_commits: [shas[1]], kind: 'paraphrase' },
        { id: 'q2', question: 'Which change wraps the help output at the terminal width?', gold_commits: [shas[2]], kind: 'paraphrase' },
        { id: 'q3', question: 'Parsing an empty JSON config file crashed. Which commit fixed that?', gold_commits: [shas[3]], kind: 'paraphrase' },
        { id: 'q4', question: 'verbosityLevel', gold_commits: [shas[4].slice(0, 10)], kind: 'identifier' },
        { id: 'q5', question: 'Which commit added the database migrations?', gold_commits: ['0123456789abcdef0123456789abcdef01234567'], kind: 'paraphrase' },
      ];
      const report = await runEval({ repo, queries: questions, embedder: 'hashed', embedderWorker: false });

      assert.equal(report.import.imported, PARSER_HISTORY.length);
      assert.equal(report.import.cells_with_vectors, report.import.cells);
      assert.deepEqual(Object.keys(report.tools).sort(), ['recall', 'recall_context', 'retrieve_memory']);
      for (const tool of ['recall', 'recall_context', 'retrieve_memory'] as const) {
        const t = report.tools[tool]!;
        const ranks = report.per_question.map((q) => q.ranks[tool]);
        // The four answerable questions name their change plainly; the fifth has no answer.
        assert.deepEqual(ranks.slice(0, 4), [1, 1, 1, 1], `${tool}: ${JSON.stringify(ranks)}`);
        assert.equal(ranks[4], null);
        assert.equal(t.metrics.hit_at_1, 0.8);
        assert.equal(t.metrics.hit_at_10, 0.8);
        assert.equal(t.metrics.mrr_at_10, 0.8);
        assert.equal(t.by_kind.identifier.hit_at_1, 1);
        assert.ok(t.latency.p95_ms >= t.latency.p50_ms && t.latency.p50_ms > 0);
      }
      const table = formatReport(report);
      assert.match(table, /\| tool +\| questions +\| n +\| hit@1 +\| hit@5 +\| hit@10 +\| MRR@10 +\| p50 ms +\| p95 ms +\|/);
      assert.match(table, /\| q5 +\| paraphrase +\| - +\| - +\| - +\|/);
    });

    it('explains a repository that does not exist', async () => {
      await assert.rejects(
        runEval({ repo: `${repo}-missing`, queries: [{ id: 'x', question: 'q', gold_commits: ['abcd123'] }], embedder: 'none' }),
        /Repository folder not found/,
      );
    });
  });
});
