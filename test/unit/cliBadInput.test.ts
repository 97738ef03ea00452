// Bad input to CLI commands, run in this process: each is a usage error (exit 2) naming the
// problem, found before any long work starts.

import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runMain } from './cliInProcess';
import { makeGitRepo, removeDir, tempDir } from './mcpFixture';

/** The line the evaluation logs once it has imported the history. */
const RAN = /import: \d+\/\d+ commits/;

describe('CLI bad input', function () {
  this.timeout(240_000);
  let work: string;
  before(() => (work = tempDir('clibad')));
  after(() => removeDir(work));

  describe('$CODE_MEMORY_EMBEDDER, read as every CODE_MEMORY_* variable is (trimmed, empty is unset)', () => {
    for (const given of ['', '  ', ' hashed ']) {
      it(`'${given}' is not a bad embedder`, async () => {
        const r = await runMain(['stats', '--store', path.join(work, 'embedder-env'), '--project', 'p', '--json'], { CODE_MEMORY_EMBEDDER: given });
        assert.equal(r.code, 0, r.err);
        assert.doesNotMatch(r.err, /must be one of/);
      });
    }

    it('an unknown name is a usage error naming the variable, not --embedder', async () => {
      const r = await runMain(['stats', '--store', path.join(work, 'embedder-env'), '--project', 'p'], { CODE_MEMORY_EMBEDDER: 'openia' });
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /\$CODE_MEMORY_EMBEDDER must be one of use-lite, hashed, openai, none, not 'openia'/);
      const flag = await runMain(['stats', '--store', path.join(work, 'embedder-env'), '--project', 'p', '--embedder', 'openia'], { CODE_MEMORY_EMBEDDER: 'hashed' });
      assert.equal(flag.code, 2, flag.err);
      assert.match(flag.err, /--embedder must be one of/);
    });
  });

  describe('whole numbers in decimal digits only (Number() reads 0x10 as 16)', () => {
    for (const given of ['0x10', '1e1', '0b11', ' 1', '', '1.0', '99999999999999999999']) {
      it(`share --memory '${given}' is a usage error`, async () => {
        const r = await runMain(['share', '--memory', given, '--store', path.join(work, 'store'), '--project', 'p']);
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, /--memory must be a positive integer id/);
      });
    }

    for (const given of ['0x5', '1e1', ' 7', '0', '51']) {
      it(`eval --k '${given}' is a usage error naming --k`, async () => {
        const r = await runMain(['eval', '--repo', path.join(work, 'no-such-repo'), '--queries', path.join(work, 'q.jsonl'), '--k', given]);
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, /--k must be an integer from 1 to 50/);
      });
    }

    it('search --limit keeps the same rule', async () => {
      for (const given of ['0x10', '1e1', ' 5', '201']) {
        const r = await runMain(['search', 'x', '--limit', given, '--store', path.join(work, 'store'), '--project', 'p']);
        assert.equal(r.code, 2, `${given}: ${r.err}`);
        assert.match(r.err, /--limit must be an integer from 1 to 200/);
      }
    });
  });

  describe('eval question file and --out', () => {
    let repo: { dir: string; shas: Record<string, string> };
    before(() => (repo = makeGitRepo()));
    after(() => removeDir(repo.dir));

    const question = (text: string): string => JSON.stringify({ id: 'q1', question: text, gold_commits: [repo.shas.parser] });

    for (const [name, line] of [['JSON null', 'null'], ['a list', '[1, 2]'], ['a number', '42'], ['a string', '"csv parser"']]) {
      it(`a question line that is ${name} is bad input naming file:line, found before the import`, async () => {
        const file = path.join(work, 'odd.jsonl');
        writeFileSync(file, `${question('csv parser')}\n${line}\n`);
        const r = await runMain(['eval', '--repo', repo.dir, '--queries', file, '--embedder', 'none', '--store', path.join(work, 'store')]);
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, /odd\.jsonl:2: .*is not a question/);
        assert.doesNotMatch(r.err, RAN);
      });
    }

    it('a question over 8,000 characters (what retrieve_memory takes) is refused with its line before the import', async () => {
      const file = path.join(work, 'long.jsonl');
      writeFileSync(file, `${question('csv parser')}\n${question(`csv parser ${'word '.repeat(2000)}`)}\n`);
      const r = await runMain(['eval', '--repo', repo.dir, '--queries', file, '--embedder', 'none', '--tools', 'retrieve_memory', '--store', path.join(work, 'store')]);
      assert.equal(r.code, 2, r.err.slice(0, 600));
      assert.match(r.err, /long\.jsonl:2: "question" is longer than 8,000 characters/);
      assert.doesNotMatch(r.err, RAN);
    });

    it('eval --out into a folder that does not exist is refused before the run', async () => {
      const file = path.join(work, 'ok.jsonl');
      writeFileSync(file, `${question('csv parser')}\n`);
      const out = path.join(work, 'no-such-folder', 'report.json');
      const r = await runMain(['eval', '--repo', repo.dir, '--queries', file, '--embedder', 'none', '--tools', 'recall', '--out', out]);
      assert.equal(r.code, 2, r.err.slice(-400));
      assert.match(r.err, /cannot write .*report\.json: the folder .*no-such-folder does not exist/);
      assert.doesNotMatch(r.err, RAN, 'the evaluation ran before --out was checked');
      const intoFolder = await runMain(['eval', '--repo', repo.dir, '--queries', file, '--embedder', 'none', '--tools', 'recall', '--out', work]);
      assert.equal(intoFolder.code, 2, intoFolder.err.slice(-400));
      assert.match(intoFolder.err, /cannot write .*: it is a folder/);
      assert.doesNotMatch(intoFolder.err, RAN);
    });
  });

  describe('import of JSON the write pass could not handle: refused whole by the check pass', () => {
    const header = JSON.stringify({ kind: 'code-memory-export', schema_version: 1, exported_at: '2026-01-01T00:00:00.000Z', project: 'p' });
    const observation = (extra: Record<string, unknown> = {}): string =>
      JSON.stringify({ kind: 'observation', record: { id: 1, project: 'p', memory_session_id: 's1', type: 'note', title: 'an observation', narrative: 'fine', status: 'active', created_at: '2026-01-01T00:00:00.000Z', created_at_epoch: 1767225600000, ...extra } });
    const memory = (id: number, extra: Record<string, unknown> = {}): string =>
      JSON.stringify({ kind: 'memory', record: { id, project: 'p', title: `memory ${id}`, text: `the text of memory ${id}`, memory_type: 'note', status: 'active', scope: 'project', classification: 'general', classification_reason: 'x', current_context_eligible: true, created_at_epoch: 1767225600000 + id, updated_at_epoch: 1767225600000 + id, source_ids: '[1]', ...extra } });
    const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const trace = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ id: 2, topic_key: 'k', title: 't', summary: 's', status: 'active', segment_index: 0, covered_from_event_id: 1, covered_to_event_id: 1, evidence_event_ids: [1], files: null, created_at_epoch: 1, updated_at_epoch: 1, ...extra });

    let n = 0;
    async function importLines(lines: string[]): Promise<{ code: number; err: string; stored: [number, number] }> {
      const file = path.join(work, `import-${++n}.jsonl`);
      writeFileSync(file, `${[header, ...lines].join('\n')}\n`);
      const store = path.join(work, `import-store-${n}`);
      const r = await runMain(['import', file, '--store', store, '--embedder', 'none']);
      const stats = await runMain(['stats', '--store', store, '--project', 'p', '--embedder', 'none', '--json']);
      const s = JSON.parse(stats.out) as { observations: number; memories: number };
      return { code: r.code, err: r.err, stored: [s.observations, s.memories] };
    }

    const refused: Array<[string, string, RegExp]> = [
      ['source_ids nested 20,000 deep', memory(2, { source_ids: nested(20_000) }), /line 4: the memory record's source_ids nests deeper than 32 levels/],
      ['source_ids an object', memory(2, { source_ids: '{"a":1}' }), /line 4: the memory record source_ids is not a JSON list of observation ids/],
      ['source_ids not JSON', memory(2, { source_ids: 'not json at all' }), /line 4: .*source_ids is not a JSON list/],
      ['topic_trace nested 20,000 deep', memory(2, { topic_trace: `[${nested(20_000)}]` }), /line 4: the memory record's topic_trace nests deeper/],
      ['topic_trace an object', memory(2, { topic_trace: '{"a":1}' }), /line 4: .*topic_trace is not a JSON list/],
      ['topic_trace of numbers', memory(2, { topic_trace: '[1, 2]' }), /line 4: .*topic_trace is not a JSON list/],
      ['temporal_facts an object', memory(2, { temporal_facts: '{"a":1}' }), /line 4: .*temporal_facts is not a JSON list of objects/],
      ['a conflict holding JSON nested 20,000 deep', memory(2, { conflicts: `[{"id":1,"reason":"r","resolution":"open","extra":${nested(20_000)}}]` }), /line 4: the memory record's conflicts nests deeper/],
      ['a narrative given as JSON nested 5,000 deep', observation({ id: 9, narrative: 'NESTED' }).replace('"NESTED"', nested(5000)), /line 4: the observation record's narrative nests deeper/],
      ['a narrative given as JSON nested 100,000 deep', observation({ id: 9, narrative: 'NESTED' }).replace('"NESTED"', nested(100_000)), /line 4: the observation record's narrative nests deeper/],
      ['compressed_sources of numbers', observation({ id: 9, compressed_sources: '[1]' }), /line 4: .*compressed_sources is not a JSON list of objects/],
    ];
    for (const [name, line, reason] of refused) {
      it(`${name}: exit 2 naming the line, and nothing of the file is stored`, async () => {
        const r = await importLines([observation(), memory(1), line]);
        assert.doesNotMatch(r.err, /Maximum call stack/);
        assert.equal(r.code, 2, r.err.slice(0, 400));
        assert.match(r.err, reason);
        assert.deepEqual(r.stored, [0, 0], 'a failed import left part of the file behind');
      });
    }

    it('imports the shapes the product writes', async () => {
      const r = await importLines([observation(), memory(1), memory(2, { topic_trace: JSON.stringify([trace()]), temporal_facts: '[]', conflicts: '[{"id":1,"reason":"r","resolution":"open"}]', files: '["src/a.ts"]' })]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(r.stored, [1, 2]);
    });
  });
});
