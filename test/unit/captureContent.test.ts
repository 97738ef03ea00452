// What capture records about work: the content of an edit (against the file's state when the
// session first touched it), one edit observation per file and session that grows, the first
// failing test of a run, and session summaries in the words a person would use.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeEdit, editHunks } from '../../src/core/capture/editDiff';
import { GitFreshness, freshnessWeight } from '../../src/core/capture/freshness';
import { firstFailingTest, outputTail } from '../../src/core/capture/testOutput';
import { recallContext } from '../../src/core/tools/recallContext';
import { ExtractiveSummariser } from '../../src/core/compress/summariser';
import { MemoryEngine } from '../../src/core/engine';
import type { Observation } from '../../src/core/model/records';
import { TABLES } from '../../src/core/store/schema';

describe('capture content: what an edit changed', () => {
  it('finds hunks with the enclosing function as header, in the new line numbers', () => {
    const before = ['class Cache {', '  evict(limit) {', '    this.items.pop();', '  }', '}', '', 'function helper() {', '  const one = 1;', '  const two = 2;', '  return one;', '}'].join('\n');
    const after = ['class Cache {', '  evict(limit) {', '    while (this.items.length > limit) this.items.shift();', '  }', '}', '', 'function helper() {', '  const one = 1;', '  const two = 2;', '  return one;', '}', '', '// keep the newest entries'].join('\n');
    const hunks = editHunks(before, after);
    assert.equal(hunks.length, 2);
    assert.deepEqual(hunks[0], { line: 3, header: 'evict(limit) {', removed: ['    this.items.pop();'], added: ['    while (this.items.length > limit) this.items.shift();'] });
    assert.equal(hunks[1].line, 12);
    assert.equal(hunks[1].header, 'function helper() {');
    assert.deepEqual(hunks[1].added, ['', '// keep the newest entries']);
  });

  it("redacts a value edited alone on its line by the name on the unchanged line above (a formatter's wrap), in both sides", () => {
    const file = (value: string): string => ['import { env } from "./env";', '', 'export const DATABASE_PASSWORD =', `  "${value}";`, 'export const region = "eu-west-1";', ''].join('\n');
    const [hunk, ...rest] = editHunks(file('Zq9WrappedOldSecret-0123456789'), file('Zq9WrappedNewSecret-9876543210'));
    assert.deepEqual(rest, []);
    assert.deepEqual([hunk.removed, hunk.added], [['  "[REDACTED]";'], ['  "[REDACTED]";']]);
    const c = describeEdit('src/db.ts', file('Zq9WrappedOldSecret-0123456789'), file('Zq9WrappedNewSecret-9876543210'));
    assert.ok(!/Zq9Wrapped/.test(`${c.narrative}\n${c.searchText}\n${c.strings.join('\n')}`), `${c.narrative}\n${c.searchText}`);
    // Far from the change, an unchanged line says nothing about it.
    const far = ['export const DATABASE_PASSWORD =', ...Array.from({ length: 20 }, (_, i) => `const filler${i} = ${i};`)];
    assert.deepEqual(editHunks(far.join('\n'), [...far, '  "just a string";'].join('\n'))[0].added, ['  "just a string";']);
  });

  it('names changed identifiers, comment lines and string literals; an unchanged file says nothing', () => {
    const c = describeEdit('src/cache.ts', 'const a = 1;\n', 'const a = 1;\n// evict the least recently used entries first\nexport const evictionPolicy = "least-recently-used";\n');
    assert.deepEqual(c.identifiersAdded, ['evictionPolicy']);
    assert.deepEqual(c.comments, ['evict the least recently used entries first']);
    assert.deepEqual(c.strings, ['least-recently-used']);
    assert.match(c.narrative ?? '', /^@@ line 2 in const a = 1;\n\+ \/\/ evict the least recently used entries first\n\+ export const evictionPolicy/);
    assert.match(c.searchText ?? '', /evict the least recently used entries first/);
    assert.deepEqual(describeEdit('src/cache.ts', 'same\n', 'same\n').hunks, []);
  });

  it('redacts an edited line whole before cutting it, and a private key added over several lines', () => {
    // The quote that closes the password lies past the line's limit: cut first, it was kept.
    const long = `const config = { note: "${'x'.repeat(170)}", password: "Zq9EditSecretValue" };`;
    const key = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAzq9KeyBodyLineOne', 'zq9KeyBodyLineTwoAAAA', '-----END RSA PRIVATE KEY-----'].join('\n');
    const c = describeEdit('src/config.ts', 'const a = 1;\n', `const a = 1;\n${long}\n${key}\n`);
    const stored = JSON.stringify(c);
    assert.ok(!/Zq9Edit|Zq9EditSecret|KeyBodyLine/i.test(stored), stored);
    assert.match(stored, /REDACTED/);
  });

  it('gives no content for secret files, lock files or files past the size cap, and bounds the rest', () => {
    assert.equal(describeEdit('config/.env.local', '', 'API_KEY=abc\n').narrative, null);
    assert.equal(describeEdit('package-lock.json', '{}', '{"a":1}').narrative, null);
    assert.equal(describeEdit('big.js', '', 'x\n'.repeat(600_000)).narrative, null);
    const many = Array.from({ length: 3000 }, (_, i) => `const value${i} = compute(${i}); // step ${i}`).join('\n');
    const c = describeEdit('src/gen.ts', '', many);
    assert.ok((c.narrative ?? '').length <= 2002, String(c.narrative?.length));
    assert.ok((c.searchText ?? '').length <= 6000);
    assert.equal(c.added, 3000);
  });
});

describe('capture content: the first failing test of a run', () => {
  it('keeps the tail of a long output from the start of a line: no part of a line the cut falls inside', () => {
    const key = 'ghp_Zq9TailCutInsideTheTokenAbcdef0123';
    const failure = '  ● deploy › pushes the image\n\n    PushError: the registry refused the upload\n';
    const output = `${'progress line\n'.repeat(3000)}Authorization: token ${key}\n${failure}`;
    const cut = output.indexOf(key) + 10;
    const tail = outputTail(output, output.length - cut);
    assert.equal(tail, failure, 'the line the cut falls inside is left out, the lines after it kept whole');
    assert.deepEqual(firstFailingTest(tail), { name: 'deploy › pushes the image', message: 'PushError: the registry refused the upload' });
    // A cut at a line's start keeps that line; output of one line goes from the first space after the cut.
    assert.equal(outputTail('abc\ndef\n', 4), 'def\n');
    assert.equal(outputTail(`x ${key} refused by the server`, 30), 'refused by the server');
    assert.equal(outputTail(key, 10), '');
    assert.equal(outputTail('short', 10), 'short');
    // A report of one line longer than the tail, then a line break: its part after the cut, from a space.
    const report = `{"testResults": [${'{"name": "t", "status": "passed"}, '.repeat(2000)}{"name": "last", "status": "failed"}]}`;
    const reportTail = outputTail(`$ npx jest --json\n${report}\n`);
    assert.ok(reportTail.length > 30_000 && report.endsWith(reportTail.trimEnd()), `${reportTail.length} characters kept`);
  });

  it('reads node:test, jest, vitest, pytest, go and cargo reports', () => {
    assert.deepEqual(firstFailingTest('▶ math\n  ✖ multiplies (1.2ms)\n    AssertionError [ERR_ASSERTION]: 6 !== 7\n\n      at TestContext.<anonymous>'), { name: 'multiplies', message: 'AssertionError [ERR_ASSERTION]: 6 !== 7' });
    assert.deepEqual(firstFailingTest('TAP version 13\nnot ok 1 - multiplies\n  ---\n  error: \'6 !== 7\'\n  ...'), { name: 'multiplies', message: '6 !== 7' });
    assert.deepEqual(firstFailingTest(' FAIL  src/math.test.js\n  ● math › multiplies\n\n    expect(received).toBe(expected)'), { name: 'math › multiplies', message: 'expect(received).toBe(expected)' });
    assert.deepEqual(firstFailingTest(' FAIL  src/math.test.ts > math > multiplies\nAssertionError: expected 6 to be 7'), { name: 'src/math.test.ts > math > multiplies', message: 'AssertionError: expected 6 to be 7' });
    assert.deepEqual(firstFailingTest('FAILED tests/test_math.py::test_multiply - assert 6 == 7\n1 failed'), { name: 'tests/test_math.py::test_multiply', message: 'assert 6 == 7' });
    assert.deepEqual(firstFailingTest('=== RUN   TestMultiply\n--- FAIL: TestMultiply (0.00s)\n    math_test.go:9: got 6, want 7\nFAIL'), { name: 'TestMultiply', message: 'math_test.go:9: got 6, want 7' });
    assert.deepEqual(firstFailingTest("---- tests::multiplies stdout ----\nthread 'tests::multiplies' panicked at src/lib.rs:9:5:\nassertion `left == right` failed"), { name: 'tests::multiplies', message: 'assertion `left == right` failed' });
  });

  it('strips terminal colours and finds nothing in a passing run', () => {
    assert.equal(firstFailingTest('\u001b[32m  3 passing\u001b[0m (4ms)\n'), null);
    assert.equal(firstFailingTest(null), null);
    assert.equal(firstFailingTest('\u001b[31m✖ adds\u001b[39m\n  Error: boom')?.name, 'adds');
  });
});

describe('capture content: one edit observation per file and session that grows', function () {
  this.timeout(60_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'grow-test' };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-grow-'));
    engine = await MemoryEngine.open({ storeUri: dir, maintenanceIntervalMs: 0 });
  });
  after(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('replaces the content of the same file in the same session, keeping its id and node id', async () => {
    const first = describeEdit('src/math.ts', 'export function multiply(a, b) {\n  return a * b;\n}\n', 'export function multiply(a, b) {\n  return a * b; // TODO handle overflow\n}\n');
    const [a] = await engine.observe([{ type: 'edit', title: 'Edited src/math.ts (multiply)', subtitle: '1 save', narrative: first.narrative ?? undefined, files_modified: ['src/math.ts'], search_extra: first.searchText ?? undefined, grow_key: 'edit:src/math.ts' }], scope);
    const [hit] = await engine.search('handle overflow', { scope, limit: 5 });
    assert.equal(hit.cell.source_id, a.id);

    const second = describeEdit('src/math.ts', 'export function multiply(a, b) {\n  return a * b;\n}\n', 'export function multiply(a, b) {\n  return Math.imul(a, b); // wrap like C does\n}\n');
    const [b] = await engine.observe([{ type: 'edit', title: 'Edited src/math.ts (multiply)', subtitle: '2 saves', narrative: second.narrative ?? undefined, files_modified: ['src/math.ts'], search_extra: second.searchText ?? undefined, grow_key: 'edit:src/math.ts' }], scope);
    assert.equal(b.id, a.id, 'the same observation grew');
    assert.equal(b.created_at_epoch, a.created_at_epoch, 'it keeps its first time');
    const stored = (await engine.listObservations(scope, { limit: 50 })).filter((o) => o.type === 'edit');
    assert.equal(stored.length, 1);
    assert.equal(stored[0].subtitle, '2 saves');
    assert.match(stored[0].narrative ?? '', /Math\.imul/);
    assert.equal(await engine.store.count(TABLES.cells, `source_kind = 'observation' AND source_id = ${a.id}`), 1, 'one cell');
    const now = await engine.search('Math imul wrap', { scope, limit: 5 });
    assert.equal(now[0]?.cell.source_id, a.id);
    assert.equal(now[0].cell.node_id, hit.cell.node_id, 'the node id a client holds still finds it');
    assert.ok(!(await engine.search('handle overflow', { scope, limit: 5 })).some((h) => h.cell.source_id === a.id && /overflow/.test(h.cell.text ?? '')), 'the old content is gone');

    // Another file, and two saves in one batch, are one observation each.
    const out = await engine.observe([
      { type: 'edit', title: 'Edited src/b.ts', subtitle: '1 save', files_modified: ['src/b.ts'], grow_key: 'edit:src/b.ts' },
      { type: 'edit', title: 'Edited src/b.ts', subtitle: '2 saves', files_modified: ['src/b.ts'], grow_key: 'edit:src/b.ts' },
    ], scope);
    assert.equal(out[0].id, out[1].id);
    const edits = (await engine.listObservations(scope, { limit: 50 })).filter((o) => o.type === 'edit');
    assert.equal(edits.length, 2);
    assert.equal(edits.find((o) => o.id === out[0].id)?.subtitle, '2 saves');
  });

  it('starts a new observation in a new session, and refuses a grow key with a dedupe key', async () => {
    const [a] = await engine.observe([{ type: 'edit', title: 'Edited src/c.ts', files_modified: ['src/c.ts'], grow_key: 'edit:src/c.ts', memory_session_id: 's1' }], scope);
    const [b] = await engine.observe([{ type: 'edit', title: 'Edited src/c.ts', files_modified: ['src/c.ts'], grow_key: 'edit:src/c.ts', memory_session_id: 's2' }], scope);
    assert.notEqual(a.id, b.id);
    await assert.rejects(engine.observe([{ type: 'edit', title: 'x', grow_key: 'edit:x', dedupe_key: 'y' }], scope), /dedupe_key or a grow_key/);
  });

  it('redacts secrets in an edit content before storing it', async () => {
    const c = describeEdit('src/config.ts', '', 'const password = "hunter2hunter2";\n');
    assert.deepEqual(c.strings, [], 'a secret is not kept as a string literal');
    const [o] = await engine.observe([{ type: 'edit', title: 'Edited src/config.ts', narrative: c.narrative ?? undefined, search_extra: c.searchText ?? undefined, files_modified: ['src/config.ts'], grow_key: 'edit:src/config.ts' }], scope);
    const rows = await engine.store.rows(TABLES.observations, `id = ${o.id}`);
    assert.ok(!JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)).includes('hunter2hunter2'));
    assert.match(String(rows[0].narrative), /\[REDACTED\]/);
  });
});

describe('session summaries in the words a person would use', () => {
  let nextId = 1;
  const obs = (o: Partial<Observation>): Observation => ({
    id: nextId++, memory_session_id: 's', content_session_id: null, project: 'p', type: 'edit', title: null, subtitle: null, narrative: null, facts: null, concepts: null,
    files_read: null, files_modified: null, commit_sha: null, branch: 'main', status: 'active', created_at: '', created_at_epoch: nextId, last_accessed_epoch: null, discovery_tokens: null, compressed_sources: null, ...o,
  });

  it('says what changed (files → symbols), what was learned, decisions and next steps', async () => {
    const session = [
      obs({ type: 'edit', title: 'Edited src/math.ts (multiply)', files_modified: '["src/math.ts"]', facts: JSON.stringify(['changed multiply in src/math.ts', 'added in src/math.ts: product', 'comment in src/math.ts: we decided to use repeated addition instead of the * operator', "problem introduced in src/math.ts: 'i' is unused (line 4)"]) }),
      obs({ type: 'task', title: "Test task 'unit tests' failed (exit 1)", concepts: '["test"]', facts: JSON.stringify(["test task unit tests failed (exit 1)", 'test failed: math multiplies (AssertionError: 6 !== 7)']) }),
      obs({ type: 'edit', title: 'Edited src/math.ts (multiply)', files_modified: '["src/math.ts"]', facts: JSON.stringify(["problem cleared in src/math.ts: 'i' is unused (line 4)"]) }),
      obs({ type: 'task', title: "Test task 'unit tests' succeeded", concepts: '["test"]', facts: JSON.stringify(['test task unit tests succeeded']) }),
      obs({ type: 'commit', title: 'Multiply by repeated addition', commit_sha: 'a'.repeat(40), files_modified: '["src/math.ts"]', facts: '["1 file(s) changed in aaaaaaaa"]' }),
      obs({ type: 'edit', title: 'Unsaved edits in src/cache.ts (evict)', files_modified: '["src/cache.ts"]', facts: '["changed evict in src/cache.ts"]' }),
      obs({ type: 'terminal', title: '`npx mocha test/cache.test.js` failed (exit 1)', concepts: '["test"]', facts: JSON.stringify(['tests `npx mocha test/cache.test.js` failed (exit 1)', 'test failed: cache evicts oldest first']) }),
    ];
    const summariser = new ExtractiveSummariser();
    assert.equal(summariser.name, 'extractive-v2');
    const s = await summariser.summarise(session, 600);
    assert.match(s.completed ?? '', /Committed: Multiply by repeated addition/);
    assert.match(s.completed ?? '', /Changed src\/math\.ts \(multiply\), src\/cache\.ts \(evict\)/);
    assert.match(s.learned ?? '', /Test task 'unit tests' went from failing \(math multiplies \(AssertionError: 6 !== 7\)\) to passing/);
    assert.match(s.learned ?? '', /Problem met and cleared in src\/math\.ts: 'i' is unused/);
    assert.match(s.decisions ?? '', /we decided to use repeated addition/);
    assert.match(s.next_steps ?? '', /Fix `npx mocha test\/cache\.test\.js` still failing: cache evicts oldest first/);
    assert.match(s.next_steps ?? '', /Unsaved edits in src\/cache\.ts/);
    assert.match(s.next_steps ?? '', /Uncommitted changes in src\/cache\.ts/);
    const all = Object.values(s).join('\n');
    assert.doesNotMatch(all, /change\(s\) to|touched multiply|added in src/, 'no capture mechanics in a summary');
  });
});

describe('freshness: whether a memory about files at a commit still holds', function () {
  this.timeout(60_000);
  let repo: string;
  const git = (...args: string[]): string => execFileSync('git', ['-C', repo, '-c', 'user.name=T', '-c', 'user.email=t@t.invalid', ...args], { encoding: 'utf8' }).trim();

  before(() => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-fresh-'));
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  });
  after(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('tells current, changed since, only on another branch and unknown apart, and asks again after HEAD moves', async () => {
    fs.writeFileSync(path.join(repo, 'a.ts'), 'export const a = 1;\n');
    fs.writeFileSync(path.join(repo, 'b.ts'), 'export const b = 1;\n');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
    const c1 = git('rev-parse', 'HEAD');
    const fresh = GitFreshness.forRepository(repo);
    assert.equal((await fresh.check(c1, ['a.ts', 'b.ts']))?.state, 'current');
    assert.equal((await fresh.check(c1, ['a.ts']))?.marker, 'still holds');
    assert.equal(await fresh.check(null, ['a.ts']), null, 'no commit, nothing to say');
    assert.equal(await fresh.check(c1, []), null, 'no files, nothing to say');

    fs.writeFileSync(path.join(repo, 'a.ts'), 'export const a = 2;\n');
    git('commit', '-qam', 'second');
    await new Promise((r) => setTimeout(r, 1100)); // HEAD is re-read after a second
    const changed = await fresh.check(c1, ['a.ts', 'b.ts']);
    assert.equal(changed?.state, 'changed');
    assert.deepEqual(changed?.changed_files, ['a.ts']);
    assert.equal(changed?.marker, `changed since ${c1.slice(0, 7)}: a.ts`);
    assert.equal((await fresh.check(c1, ['b.ts']))?.state, 'current');
    // File names a record holds are names, not patterns: none of them is a.ts (changed), and as
    // files of neither commit nor of the working tree they are gone, under their own names.
    assert.deepEqual((await fresh.check(c1, ['*', ':(exclude)b.ts', '*.ts']))?.changed_files, ['*', ':(exclude)b.ts', '*.ts']);

    git('checkout', '-q', '-b', 'other');
    fs.writeFileSync(path.join(repo, 'c.ts'), 'export const c = 1;\n');
    git('add', 'c.ts');
    git('commit', '-qm', 'third');
    const c3 = git('rev-parse', 'HEAD');
    git('checkout', '-q', 'main');
    await new Promise((r) => setTimeout(r, 1100));
    const off = await fresh.check(c3, ['c.ts']);
    assert.equal(off?.state, 'off_branch');
    assert.deepEqual(off?.branches, ['other']);
    assert.equal(off?.marker, 'not on this branch (only on other)');
    assert.equal((await fresh.check('f'.repeat(40), ['a.ts']))?.state, 'unknown');
    assert.ok(freshnessWeight('changed') < 1 && freshnessWeight('off_branch') < 1 && freshnessWeight('current') === 1);

    // HEAD stays put while the branch that held the commit goes: it is no longer named.
    git('branch', '-D', 'other');
    await new Promise((r) => setTimeout(r, 1100));
    const orphaned = await fresh.check(c3, ['c.ts']);
    assert.deepEqual([orphaned?.state, orphaned?.branches, orphaned?.marker], ['off_branch', [], 'not on this branch']);
    // No commit at HEAD (an orphan branch), then no repository at all: unknown, not silence.
    // (A checker of its own: `fresh` would keep that HEAD for a second after main is back.)
    git('checkout', '-q', '--orphan', 'fresh-start');
    assert.equal((await GitFreshness.forRepository(repo).check(c1, ['a.ts']))?.state, 'unknown');
    git('checkout', '-q', '-f', 'main');
    const gone = GitFreshness.forRepository(path.join(repo, 'no-such-folder'));
    assert.deepEqual(await gone.check(c1, ['a.ts']), { state: 'unknown', commit_sha: c1, changed_files: [], branches: [], marker: 'cannot be checked: the repository cannot be read or has no commit at HEAD' });

    // recall_context says it in a short marker and in structuredContent, and ranks it lower.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-fresh-store-'));
    const engine = await MemoryEngine.open({ storeUri: dir, maintenanceIntervalMs: 0 });
    try {
      const scope = { project: 'fresh' };
      await engine.observe([
        { type: 'commit', title: 'Parser decision: tokens are interned', commit_sha: c1, files_modified: ['a.ts'] },
        { type: 'commit', title: 'Parser decision: tokens are interned for speed', commit_sha: c1, files_modified: ['b.ts'] },
      ], scope);
      const out = await recallContext({ engine, scope, freshness: fresh }, { query: 'parser decision tokens interned' });
      assert.match(out.text, new RegExp(`\\[changed since ${c1.slice(0, 7)}: a\\.ts\\]`));
      assert.match(out.text, /\[still holds\]/);
      assert.deepEqual(out.items.map((i) => i.freshness), ['current', 'changed'], 'the changed one ranks lower, and is still there');
      const plain = await recallContext({ engine, scope }, { query: 'parser decision tokens interned' });
      assert.doesNotMatch(plain.text, /still holds|changed since/, 'no repository, no marker');
    } finally {
      await engine.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
