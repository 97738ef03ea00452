// The pure half of the extension's capture: exclude globs and the events → observations step.
import * as assert from 'node:assert/strict';
import type { CaptureEvent } from '../../src/extension/capture/events';
import { DEFAULT_EXCLUDES, ExcludeMatcher, globToRegExp } from '../../src/extension/capture/excludes';
import type { Enrichment } from '../../src/extension/capture/observationBuilder';
import { buildObservations, editGrowKey, fileKey, lineRanges } from '../../src/extension/capture/observationBuilder';
import { describeEdit } from '../../src/core/capture/editDiff';
import { isSecretPath } from '../../src/core/capture/redact';

const F = 'file:///ws';

function enrich(partial: Partial<Enrichment> = {}): Enrichment {
  return { symbols: new Map(), commits: new Map(), branchOf: () => 'main', ...partial };
}

describe('extension capture: exclude globs', () => {
  const m = new ExcludeMatcher(DEFAULT_EXCLUDES);

  it('excludes the default secret files anywhere in the tree', () => {
    for (const p of ['.env', '.env.local', 'config/.env.production', '.envrc', 'certs/server.pem', 'a/b/private.key', 'id_rsa', 'home/.ssh/id_ed25519.pub', 'home/.ssh/id_ecdsa_sk', 'id_dsa.pub', 'secrets/token.txt', 'deploy/secrets/prod/db.yaml']) {
      assert.equal(m.isExcluded(p), true, p);
    }
  });

  it('keeps ordinary source files, and documents and source only named like secret files (README, Privacy)', () => {
    for (const p of ['src/env.ts', 'src/environment.ts', 'keys.ts', 'docs/secrets.md', 'src/identity.ts', 'README.md', 'docs/.envrc.md', '.env-setup.txt', 'src/id_utils.ts', 'id_test.go', 'id_rsa_utils.ts']) {
      assert.equal(m.isExcluded(p), false, p);
    }
  });

  it('excludes only what the secret-path rule calls secret, so a default glob never drops a file the README says is kept', () => {
    const names = ['.env', '.env.local', '.env.md', '.envrc', '.envrc.md', '.env-setup.txt', 'prod.env', 'id_rsa', 'id_rsa.pub', 'id_ed25519_sk', 'id_ecdsa_sk.pub', 'id_utils.ts', 'id_rsa_utils.ts', 'server.pem', 'private.key', 'secrets/a.txt', 'src/a.ts'];
    for (const p of names.flatMap((n) => [n, `deep/folder/${n}`])) {
      if (m.isExcluded(p)) assert.equal(isSecretPath(p), true, `${p} is excluded by default but not secret`);
    }
  });

  it('supports folders, braces and single-character wildcards', () => {
    assert.equal(globToRegExp('build/').test('build/out/a.js'), true);
    assert.equal(globToRegExp('**/*.{crt,p12}').test('a/b/c.p12'), true);
    assert.equal(globToRegExp('**/*.{crt,p12}').test('a/b/c.p13'), false);
    assert.equal(globToRegExp('src/?.ts').test('src/a.ts'), true);
    assert.equal(globToRegExp('src/?.ts').test('src/ab.ts'), false);
  });
});

describe('extension capture: events to observations', () => {
  it('merges focus periods on one file into one read with the time spent', () => {
    const events: CaptureEvent[] = [
      { kind: 'read', folder: F, path: 'src/a.ts', ms: 61_000, at: 1 },
      { kind: 'read', folder: F, path: 'src/a.ts', ms: 4_000, at: 2 },
      { kind: 'read', folder: F, path: 'src/b.ts', ms: 0, at: 3 },
    ];
    const [inputs] = [...buildObservations(events, enrich()).values()];
    assert.equal(inputs.length, 2);
    assert.equal(inputs[0].title, 'Read src/a.ts (1m 5s)');
    assert.deepEqual(inputs[0].files_read, ['src/a.ts']);
    assert.equal(inputs[0].branch, 'main');
    assert.equal(inputs[1].subtitle, 'visible in an editor');
  });

  it('turns a saved edit into one observation with the symbols touched and the lines', () => {
    const events: CaptureEvent[] = [
      { kind: 'read', folder: F, path: 'src/a.ts', ms: 5000, at: 1 },
      { kind: 'edit', folder: F, path: 'src/a.ts', uri: `${F}/src/a.ts`, lines: [9, 10, 11, 40], changes: 7, saved: true, before: null, after: null, saves: 1, problemsBefore: [], at: 2 },
      { kind: 'disk_change', folder: F, path: 'src/a.ts', at: 3 },
    ];
    const inputs = buildObservations(events, enrich({ symbols: new Map([[fileKey(F, 'src/a.ts'), ['Cache.evict', 'hash']]]) })).get(F) ?? [];
    assert.equal(inputs.length, 1, JSON.stringify(inputs.map((i) => i.title)));
    assert.equal(inputs[0].type, 'edit');
    assert.equal(inputs[0].title, 'Edited src/a.ts (Cache.evict, hash)');
    assert.equal(inputs[0].subtitle, '1 save · lines 10-12, 41');
    assert.deepEqual(inputs[0].concepts, ['Cache.evict', 'hash']);
    assert.equal(inputs[0].grow_key, 'edit:src/a.ts');
  });

  it('says what an edit changed: hunks, identifiers, comments, strings, problems; counts saves, not keystrokes', () => {
    const before = 'export function multiply(a, b) {\n  return a * b;\n}\n';
    const after = 'export function multiply(a, b) {\n  // repeated addition keeps negative factors visible\n  let product = 0;\n  for (let i = 0; i < b; i++) product += a;\n  if (b < 0) throw new Error("negative factors are not supported");\n  return product;\n}\n';
    const edit = (at: number, saves: number): CaptureEvent => ({ kind: 'edit', folder: F, path: 'src/math.ts', uri: `${F}/src/math.ts`, lines: [1, 2, 3], changes: 74, saved: true, before, after, saves, problemsBefore: ["Cannot find name 'multipy'. (line 9)"], at });
    const content = describeEdit('src/math.ts', before, after);
    const [input] = buildObservations([edit(1, 1), edit(2, 2)], enrich({
      symbols: new Map([[fileKey(F, 'src/math.ts'), ['multiply']]]),
      edits: new Map([[fileKey(F, 'src/math.ts'), content]]),
      problems: new Map([[fileKey(F, 'src/math.ts'), ["'i' is declared but never used. (line 4)"]]]),
    })).get(F) ?? [];
    assert.equal(input.title, 'Edited src/math.ts (multiply)');
    assert.equal(input.subtitle, '2 saves · 1 hunk, +5 −1 lines');
    assert.doesNotMatch(JSON.stringify(input), /74/, 'keystrokes are not what a person counts');
    assert.match(input.narrative ?? '', /@@ line 2 in export function multiply\(a, b\) \{\n- return a \* b;\n\+ \/\/ repeated addition/);
    const facts = (input.facts ?? []).join('\n');
    assert.match(facts, /changed multiply in src\/math\.ts/);
    assert.match(facts, /added in src\/math\.ts: product/);
    assert.match(facts, /comment in src\/math\.ts: repeated addition keeps negative factors visible/);
    assert.match(facts, /strings in src\/math\.ts: "negative factors are not supported"/);
    assert.match(facts, /problem introduced in src\/math\.ts: 'i' is declared but never used/);
    assert.match(facts, /problem cleared in src\/math\.ts: Cannot find name 'multipy'/);
    assert.match(input.search_extra ?? '', /multiply/);
    assert.match(input.search_extra ?? '', /negative factors are not supported/);
    assert.equal(input.grow_key, 'edit:src/math.ts');
  });

  it('groups many files changed at once, and pairs a delete and a create into a rename', () => {
    const events: CaptureEvent[] = [
      ...Array.from({ length: 8 }, (_, i): CaptureEvent => ({ kind: 'disk_change', folder: F, path: `src/gen/f${i}.ts`, at: i })),
      { kind: 'delete', folder: F, path: 'src/old/util.ts', at: 10 },
      { kind: 'create', folder: F, path: 'src/lib/util.ts', at: 11 },
    ];
    const same = 'b'.repeat(40);
    const inputs = buildObservations(events, enrich({ contentIds: new Map([[fileKey(F, 'src/old/util.ts'), same], [fileKey(F, 'src/lib/util.ts'), same]]) })).get(F) ?? [];
    const titles = inputs.map((i) => i.title);
    assert.ok(titles.includes('Renamed src/old/util.ts to src/lib/util.ts'), titles.join(' | '));
    assert.ok(titles.includes('Changed on disk: 8 files'), titles.join(' | '));
    assert.equal(inputs.find((i) => i.title === 'Changed on disk: 8 files')?.subtitle, 'in src/gen/');
    assert.equal(inputs.length, 2);
  });

  it('keeps a delete and a create of the same file name apart unless their contents say they are one file', () => {
    const events: CaptureEvent[] = [
      { kind: 'delete', folder: F, path: 'src/old/index.ts', at: 1 },
      { kind: 'create', folder: F, path: 'src/new-widget/index.ts', at: 2 },
    ];
    const titles = (ids?: [string, string][]): string[] => (buildObservations(events, enrich({ contentIds: ids && new Map(ids) })).get(F) ?? []).map((i) => i.title!).sort();
    const apart = ['Created src/new-widget/index.ts', 'Deleted src/old/index.ts'];
    assert.deepEqual(titles(), apart, 'nothing known of the contents');
    assert.deepEqual(titles([[fileKey(F, 'src/old/index.ts'), 'a'.repeat(40)], [fileKey(F, 'src/new-widget/index.ts'), 'c'.repeat(40)]]), apart, 'different contents');
    assert.deepEqual(titles([[fileKey(F, 'src/new-widget/index.ts'), 'c'.repeat(40)]]), apart, 'the deleted file unknown');
    assert.deepEqual(titles([[fileKey(F, 'src/old/index.ts'), 'c'.repeat(40)], [fileKey(F, 'src/new-widget/index.ts'), 'c'.repeat(40)]]), ['Renamed src/old/index.ts to src/new-widget/index.ts']);
    assert.deepEqual(titles([[fileKey('file:///other', 'src/old/index.ts'), 'c'.repeat(40)], [fileKey(F, 'src/new-widget/index.ts'), 'c'.repeat(40)]]), apart, "another folder's file");
  });

  it('gives an edit of a very long path a grow key within the engine\'s limit, the same for the same path', () => {
    const long = `${'d'.repeat(1200)}/price.ts`;
    const edit = (path: string, at: number): CaptureEvent => ({ kind: 'edit', folder: F, path, uri: `${F}/${path}`, lines: [1], changes: 1, saved: true, before: null, after: null, saves: 1, problemsBefore: [], at });
    const key = (path: string, at: number): string => (buildObservations([edit(path, at)], enrich()).get(F) ?? [])[0].grow_key!;
    assert.equal(key('src/a.ts', 1), 'edit:src/a.ts');
    assert.match(key(long, 1), /^edit:sha256:[0-9a-f]{64}$/);
    assert.equal(key(long, 1), key(long, 2));
    assert.notEqual(key(long, 1), key(`${long}x`, 1));
    assert.equal(editGrowKey('x'.repeat(995)).length, 1000);
    assert.match(editGrowKey('x'.repeat(996)), /^edit:sha256:/);
  });

  it('describes commits from their details and makes them idempotent by SHA', () => {
    const sha = 'a'.repeat(40);
    const events: CaptureEvent[] = [{ kind: 'commit', folder: F, sha, branch: 'feature/x', repoRoot: '/ws', at: 5 }];
    const details = { subject: 'Fix cache eviction', body: 'Evict least recently used first.', files: ['src/cache.ts'], author: 'Ada' };
    const [input] = buildObservations(events, enrich({ commits: new Map([[fileKey(F, sha), details]]) })).get(F) ?? [];
    assert.equal(input.type, 'commit');
    assert.equal(input.title, 'Fix cache eviction');
    assert.equal(input.subtitle, 'aaaaaaaa on feature/x by Ada');
    assert.equal(input.branch, 'feature/x');
    assert.equal(input.dedupe_key, `commit:${sha}`);
    assert.deepEqual(input.files_modified, ['src/cache.ts']);
  });

  it("keeps each folder's enrichment to its own observations (two repositories with the same paths and SHA)", () => {
    const G = 'file:///api';
    const sha = 'c'.repeat(40);
    const edit = (folder: string): CaptureEvent => ({ kind: 'edit', folder, path: 'src/index.ts', uri: `${folder}/src/index.ts`, lines: [0], changes: 1, saved: true, before: null, after: null, saves: 1, problemsBefore: [], at: 1 });
    const commit = (folder: string): CaptureEvent => ({ kind: 'commit', folder, sha, branch: 'main', repoRoot: folder.slice(7), at: 2 });
    const groups = buildObservations([edit(F), edit(G), commit(F), commit(G)], enrich({
      symbols: new Map([[fileKey(F, 'src/index.ts'), ['shopRate']], [fileKey(G, 'src/index.ts'), ['apiTimeout']]]),
      problems: new Map([[fileKey(G, 'src/index.ts'), ['api problem']]]),
      commits: new Map([[fileKey(F, sha), { subject: 'Shop work', body: '', files: ['src/index.ts'], author: null }], [fileKey(G, sha), { subject: 'Api work', body: '', files: ['src/index.ts'], author: null, moved: { from: 'd'.repeat(40), ahead: 1, behind: 0 } }]]),
    }));
    assert.deepEqual((groups.get(F) ?? []).map((i) => i.title), ['Shop work', 'Edited src/index.ts (shopRate)']);
    assert.deepEqual((groups.get(G) ?? []).map((i) => i.title), ['HEAD moved on main: pulled/merged 1 commit', 'Edited src/index.ts (apiTimeout)']);
    assert.doesNotMatch(JSON.stringify(groups.get(F)), /api/);
  });

  it('reports task and terminal outcomes', () => {
    const events: CaptureEvent[] = [
      { kind: 'task', folder: F, name: 'test', source: 'npm', group: 'test', exitCode: 1, output: null, at: 1 },
      { kind: 'terminal', folder: F, command: 'npm test -- --grep cache', cwd: null, exitCode: 0, output: '  3 passing (4ms)\n', at: 2 },
      { kind: 'debug', folder: F, name: 'Launch server', type: 'node', ended: true, ms: 65_000, at: 3 },
    ];
    const inputs = buildObservations(events, enrich()).get(F) ?? [];
    assert.equal(inputs[0].title, "Test task 'test' failed (exit 1)");
    assert.equal(inputs[1].title, '`npm test -- --grep cache` succeeded');
    assert.deepEqual(inputs[1].concepts, ['test']);
    assert.equal(inputs[2].title, "Debug session 'Launch server' ended after 1m 5s");
  });

  it('names the first failing test and its message when a test run fails', () => {
    const output = ['', '  math', '    1) multiplies', '', '  0 passing (5ms)', '  1 failing', '', '  1) math', '       multiplies:', '', '      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:', '', '6 !== 7', ''].join('\n');
    const events: CaptureEvent[] = [
      { kind: 'task', folder: F, name: 'unit tests', source: 'Workspace', group: 'test', exitCode: 1, output, at: 1 },
      { kind: 'terminal', folder: F, command: 'npx mocha', cwd: null, exitCode: 2, output, at: 2 },
    ];
    const [task, terminal] = buildObservations(events, enrich()).get(F) ?? [];
    assert.equal(task.subtitle, 'first failing test: math multiplies');
    assert.match(task.narrative ?? '', /First failing test: math multiplies\nAssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal:/);
    assert.ok(task.facts?.includes('test failed: math multiplies (AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:)'), JSON.stringify(task.facts));
    assert.equal(terminal.subtitle, 'first failing test: math multiplies');
  });

  it('keeps folders apart', () => {
    const events: CaptureEvent[] = [
      { kind: 'create', folder: F, path: 'a.ts', at: 1 },
      { kind: 'create', folder: 'file:///other', path: 'b.ts', at: 2 },
    ];
    const out = buildObservations(events, enrich());
    assert.deepEqual([...out.keys()], [F, 'file:///other']);
  });

  it('writes line ranges compactly', () => {
    assert.equal(lineRanges([4, 2, 3, 9]), '3-5, 10');
    assert.equal(lineRanges([]), '');
  });
});
