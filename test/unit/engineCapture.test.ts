import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { REDACTED, isSecretPath, redact } from '../../src/core/capture/redact';
import { defaultBranchFor, IDENTITY_FILE, normaliseRemote, pathIdentity, projectScopeFor } from '../../src/core/capture/project';
import { resolveScope } from '../../src/cli/context';
import { runMain } from './cliInProcess';
import { globalOptionsFrom } from '../../src/cli/options';
import { defaultStoreUri } from '../../src/core/store/location';
import { TABLES } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';

describe('capture: redaction', () => {
  const cases: [string, string][] = [
    ['key AKIAIOSFODNN7EXAMPLE in config', 'AKIAIOSFODNN7EXAMPLE'],
    ['token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB'],
    ['OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234', 'sk-proj-abcdefghijklmnopqrstuvwx1234'],
    ['export DB_PASSWORD="hunter2hunter2"', 'hunter2hunter2'],
    ['"client_secret": "s3cr3t-value-123"', 's3cr3t-value-123'],
    ['postgres://admin:pa55word@db.internal:5432/app', 'pa55word'],
    ['Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456', 'abcdefghijklmnopqrstuvwxyz123456'],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEA7'],
    ['slack xoxb-123456789012-abcdefghijkl', 'xoxb-123456789012-abcdefghijkl'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
  ];
  for (const [text, secret] of cases) {
    it(`redacts ${secret.slice(0, 12)}...`, () => {
      const out = redact(text);
      assert.ok(!out.includes(secret), out);
      assert.ok(out.includes(REDACTED), out);
    });
  }
  it('knows secret files by their path', () => {
    for (const f of ['.env', 'app/.env.local', 'certs/server.pem', 'k/tls.key', 'home/.ssh/id_ed25519', 'config/secrets/db.json']) assert.ok(isSecretPath(f), f);
    for (const f of ['src/env.ts', 'src/keyboard.ts', 'src/id_utils.ts', 'docs/secretary.md', 'src/environment/.envrc.md']) assert.ok(!isSecretPath(f), f);
  });
  it('leaves ordinary code alone', () => {
    const code = 'const token = getToken(); // refresh the auth flow\nfunction passwordStrength(p) {}';
    assert.equal(redact(code), code);
    assert.equal(redact('see src/auth/tokenStore.ts'), 'see src/auth/tokenStore.ts');
  });
});

describe('capture: project names and store location', () => {
  it('normalises git remotes', () => {
    assert.equal(normaliseRemote('git@github.com:Acme/App.git'), 'github.com/acme/app');
    assert.equal(normaliseRemote('https://user:pw@GitHub.com/acme/app'), 'github.com/acme/app');
    assert.equal(normaliseRemote('ssh://git@gitlab.example.com:2222/group/sub/repo.git'), 'gitlab.example.com/group/sub/repo');
    assert.equal(normaliseRemote('/srv/repos/app.git'), null);
    assert.equal(normaliseRemote('C:/repos/app.git'), null, 'a Windows drive is not a host');
  });
  it("keeps what tells two repositories apart: a self-hosted path's case, an ssh user's home folder", () => {
    assert.equal(normaliseRemote('ssh://git@git.example.internal/srv/git/Tools.git'), 'git.example.internal/srv/git/Tools');
    assert.equal(normaliseRemote('alice@dev.example.internal:app.git'), 'dev.example.internal/~alice/app');
    assert.equal(normaliseRemote('ssh://alice@dev.example.internal/~/app.git'), 'dev.example.internal/~alice/app', 'the same home folder, as a URL');
    assert.equal(normaliseRemote('ssh://dev.example.internal/~bob/app.git'), 'dev.example.internal/~bob/app');
    assert.equal(normaliseRemote('alice@dev.example.internal:/srv/app.git'), 'dev.example.internal/srv/app', 'an absolute path is no one\'s home');
    assert.equal(normaliseRemote('git@dev.example.internal:team/app.git'), 'dev.example.internal/team/app', 'git is the usual service account');
    // Without a user, an scp path is still relative to the (unnamed) ssh user's home: not the root path.
    assert.equal(normaliseRemote('dev.example.internal:app.git'), 'dev.example.internal/~/app');
    assert.equal(normaliseRemote('ssh://dev.example.internal/~/app.git'), 'dev.example.internal/~/app', 'the same home folder, as a URL');
    assert.notEqual(normaliseRemote('dev.example.internal:app.git'), normaliseRemote('ssh://dev.example.internal/app.git'), '/app.git is another repository');
    assert.equal(normaliseRemote('dev.example.internal:/srv/app.git'), 'dev.example.internal/srv/app');
    assert.equal(normaliseRemote('https://alice@dev.example.internal/team/App.git'), 'dev.example.internal/team/App', 'an http user is a credential, not a home');
    // One repository reached over ssh and https (a forge's ssh port is not its web port) is one project.
    assert.equal(normaliseRemote('ssh://git@dev.example.internal:2222/team/App.git'), normaliseRemote('https://dev.example.internal/team/App.git'));
    assert.equal(normaliseRemote('ssh://Someone@GitLab.com/Group/App.git'), 'gitlab.com/group/app', 'a forge ignores case and the user');
  });
  it('uses the remote of a real repository, else the folder name with an identity of its own', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-project-'));
    const repo = path.join(dir, 'my-folder');
    fs.mkdirSync(repo);
    const plain = await projectScopeFor(repo);
    assert.match(plain, /^my-folder-[0-9a-f]{8}$/);
    assert.equal(await projectScopeFor(repo), plain, 'the same folder is the same project');
    execFileSync('git', ['init', '-q', repo]);
    const kept = await projectScopeFor(repo);
    assert.match(kept, /^my-folder-[0-9a-f]{12}$/, 'a repository gets a name of its own');
    assert.equal(fs.readFileSync(path.join(repo, '.git', IDENTITY_FILE), 'utf8').trim(), kept, 'kept in the git folder');
    assert.equal(await projectScopeFor(repo), kept);
    execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', 'git@github.com:Acme/Widget.git']);
    assert.equal(await projectScopeFor(repo), 'github.com/acme/widget');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  it('never gives two remote-less folders of one name the same project; a moved repository keeps its own', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-project-'));
    const [a, b, c] = ['a', 'b', 'c'].map((p) => path.join(dir, p, 'app'));
    for (const f of [a, b, c]) fs.mkdirSync(f, { recursive: true });
    const git = (repo: string, ...args: string[]) => execFileSync('git', ['-C', repo, ...args], { stdio: 'pipe' });
    for (const f of [a, b]) {
      execFileSync('git', ['init', '-q', f]);
      fs.writeFileSync(path.join(f, 'same.txt'), 'the same first commit\n');
      git(f, 'add', '.');
      git(f, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '--date=2020-01-01T00:00:00Z', '-m', 'same');
    }
    const [pa, pb, pc] = await Promise.all([a, b, c].map((f) => projectScopeFor(f)));
    assert.equal(new Set([pa, pb, pc]).size, 3, `${pa} ${pb} ${pc}`);
    for (const p of [pa, pb]) assert.match(p, /^app-[0-9a-f]{12}$/);
    assert.equal(pc, `app-${pathIdentity(c)}`, 'outside git: the path names it');
    // A subfolder is its repository's project; a worktree shares it.
    fs.mkdirSync(path.join(a, 'src'));
    assert.equal(await projectScopeFor(path.join(a, 'src')), pa);
    const tree = path.join(dir, 'app-tree');
    git(a, 'worktree', 'add', '-q', tree);
    assert.equal(await projectScopeFor(tree), pa, 'a worktree is its repository');
    git(a, 'worktree', 'remove', '--force', tree);
    // Moved (renamed parent), the repository keeps its identity; its name follows the folder.
    const moved = path.join(dir, 'elsewhere');
    fs.renameSync(path.join(dir, 'a'), moved);
    assert.equal(await projectScopeFor(path.join(moved, 'app')), pa);
    // A file that names something else (another folder's path-made name, a remote's) is not
    // trusted, nor rewritten.
    for (const forged of [`${pc}\n`, 'github.com/acme/app-0123456789ab\n', '../../etc\n']) {
      fs.writeFileSync(path.join(b, '.git', IDENTITY_FILE), forged);
      assert.equal(await projectScopeFor(b), `app-${pathIdentity(b)}`, forged);
      assert.equal(fs.readFileSync(path.join(b, '.git', IDENTITY_FILE), 'utf8'), forged);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  it('gives a fresh repository one name however many ask at once, whatever its folder is called, and a linked folder its target\'s', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-project-'));
    try {
      for (let round = 0; round < 5; round++) {
        const repo = path.join(dir, `race${round}`, 'app');
        fs.mkdirSync(repo, { recursive: true });
        execFileSync('git', ['init', '-q', repo]);
        const names = await Promise.all(Array.from({ length: 16 }, () => projectScopeFor(repo)));
        assert.equal(new Set(names).size, 1, `round ${round}: ${[...new Set(names)].join(', ')}`);
        assert.equal(fs.readFileSync(path.join(repo, '.git', IDENTITY_FILE), 'utf8').trim(), names[0]);
        assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).filter((f) => f.startsWith(`${IDENTITY_FILE}.`)), [], 'no temporary file left');
      }
      for (const odd of ['back\\slash', 'new\nline', 'tab\there', 'x'.repeat(220)]) {
        const repo = path.join(dir, 'odd', odd);
        fs.mkdirSync(repo, { recursive: true });
        execFileSync('git', ['init', '-q', repo]);
        const first = await projectScopeFor(repo);
        assert.equal(await projectScopeFor(repo), first, `${JSON.stringify(odd)}: the name changed on the second ask`);
        assert.doesNotMatch(first, /[\p{Cc}/\\]/u);
      }
      // Outside git, a linked folder is its target (the CLI's working folder is the real path).
      const target = path.join(dir, 'service');
      fs.mkdirSync(target);
      fs.symlinkSync(target, path.join(dir, 'link-to-service'));
      assert.equal(await projectScopeFor(path.join(dir, 'link-to-service')), await projectScopeFor(target));
      // A pipe where the identity file goes is never read (reading one would wait for ever).
      const piped = path.join(dir, 'piped');
      fs.mkdirSync(piped);
      execFileSync('git', ['init', '-q', piped]);
      execFileSync('mkfifo', [path.join(piped, '.git', IDENTITY_FILE)]);
      assert.equal(await projectScopeFor(piped), `piped-${pathIdentity(piped)}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  it("takes a repository's default branch from its remote's HEAD, and gives it with the folder's scope", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-default-branch-'));
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
    try {
      git('init', '-q', '--initial-branch=develop', 'upstream');
      git('-C', 'upstream', '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '--allow-empty', '-m', 'first');
      git('clone', '-q', 'upstream', 'clone');
      const clone = path.join(dir, 'clone');
      git('-C', clone, 'remote', 'set-url', 'origin', 'git@github.com:Acme/Flow.git');
      assert.equal(await defaultBranchFor(clone), 'develop');
      git('-C', clone, 'checkout', '-q', '-b', 'feature-x');
      assert.equal(await defaultBranchFor(clone), 'develop', 'the current branch is not the default');
      const options = (args: Record<string, unknown>) => ({ ...globalOptionsFrom(args, {}), cwd: clone });
      assert.deepEqual(await resolveScope(options({ branch: 'feature-x' })), { project: 'github.com/acme/flow', branch: 'feature-x', defaultBranch: 'develop' });
      assert.deepEqual(await resolveScope(options({ project: 'github.com/acme/flow' })), { project: 'github.com/acme/flow', defaultBranch: 'develop' });
      // Another project named by --project: the folder's default branch is not its own.
      assert.deepEqual(await resolveScope(options({ project: 'github.com/acme/other' })), { project: 'github.com/acme/other' });
      git('-C', clone, 'remote', 'set-head', 'origin', '--delete');
      assert.equal(await defaultBranchFor(clone), null, 'no remote HEAD: unknown');
      assert.equal(await defaultBranchFor(path.join(dir, 'upstream')), null, 'no remote: unknown');
      assert.equal(await defaultBranchFor(dir), null, 'not a repository');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  it('puts the store in the home folder unless CODE_MEMORY_STORE says otherwise', () => {
    assert.equal(defaultStoreUri({}), path.join(os.homedir(), '.code-memory', 'store'));
    assert.equal(defaultStoreUri({ CODE_MEMORY_STORE: 's3://bucket/memory' }), 's3://bucket/memory');
    assert.equal(defaultStoreUri({ CODE_MEMORY_STORE: '~/memory' }), path.join(os.homedir(), 'memory'));
    // A relative folder would be another store in each folder a process starts in: not used.
    assert.equal(defaultStoreUri({ CODE_MEMORY_STORE: 'relstore' }), path.join(os.homedir(), '.code-memory', 'store'));
  });
  it('the CLI refuses a relative CODE_MEMORY_STORE (exit 2) and creates nothing', async () => {
    const name = `relstore-${process.pid}`;
    const refused = await runMain(['stats', '--project', 'a'], { CODE_MEMORY_STORE: name, CODE_MEMORY_EMBEDDER: 'none' });
    assert.equal(refused.code, 2, refused.err);
    assert.equal(refused.err, `error: CODE_MEMORY_STORE '${name}' is a relative path: each folder a command starts in would have a store of its own; give an absolute path, ~/… or a URI\n`);
    assert.equal(fs.existsSync(path.resolve(name)), false);
  });
});

describe('engine: capture pipeline', function () {
  this.timeout(60_000);
  let dir: string;
  let engine: MemoryEngine;
  const scope = { project: 'acme/app', branch: 'main' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-capture-'));
    engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20 });
  });
  afterEach(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('redacts secrets before anything is stored or indexed', async () => {
    const [o] = await engine.observe(
      [{ type: 'terminal', title: 'export API_KEY=sk-live-abcdefghijklmnopqrstuvwxyz', narrative: 'ran with ghp_abcdefghijklmnopqrstuvwxyz0123456789AB', facts: ['password=topsecretvalue'] }],
      scope,
    );
    const m = await engine.remember({ title: 'db', text: 'connect with postgres://app:pa55word99@db/app' }, scope);
    const all = JSON.stringify([await engine.getObservations([o.id], scope), await engine.getMemories([m.id], scope), await engine.store.rows(TABLES.cells, null, { select: ['text', 'search_text'] })]);
    for (const secret of ['sk-live-abcdefghijklmnopqrstuvwxyz', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB', 'topsecretvalue', 'pa55word99']) {
      assert.ok(!all.includes(secret), secret);
    }
    assert.ok(all.includes(REDACTED));
    const [withFiles] = await engine.observe([{ type: 'read', title: 'Read config', files_read: ['.env.production', 'src/config.ts'] }], scope);
    assert.deepEqual(JSON.parse(withFiles.files_read ?? '[]'), ['src/config.ts']);
  });

  it('merges near-duplicate observations instead of storing them again', async () => {
    const edit = { type: 'edit', title: 'Edited src/app.ts', files_modified: ['src/app.ts'] };
    const [a] = await engine.observe([edit], scope);
    const [b, c] = await engine.observe([{ ...edit, facts: ['added a retry'] }, { ...edit, title: 'edited  SRC/app.ts ' }], scope);
    assert.equal(b.id, a.id);
    assert.equal(c.id, a.id);
    const rows = await engine.store.rows(TABLES.observations, null);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].occurrences, 3);
    assert.deepEqual(JSON.parse(String(rows[0].facts)), ['added a retry']);
    // Other files, another type or another session are different observations.
    const [d] = await engine.observe([{ ...edit, files_modified: ['src/other.ts'] }], scope);
    const [e] = await engine.observe([{ ...edit, type: 'read' }], scope);
    const [f] = await engine.observe([{ ...edit, memory_session_id: 'another-session' }], scope);
    assert.equal(new Set([a.id, d.id, e.id, f.id]).size, 4);
    // Inside one batch too.
    const [g, h] = await engine.observe([{ type: 'read', title: 'Read x', files_read: ['x.ts'] }, { type: 'read', title: 'Read x', files_read: ['x.ts'] }], scope);
    assert.equal(g.id, h.id);
  });

  it('dedupe keys make imports idempotent', async () => {
    const [a] = await engine.observe([{ type: 'commit', title: 'Fix login', commit_sha: 'abc1234', dedupe_key: 'commit:abc1234' }], scope);
    const [b] = await engine.observe([{ type: 'commit', title: 'Fix login', commit_sha: 'abc1234', dedupe_key: 'commit:abc1234' }], scope);
    assert.equal(a.id, b.id);
    assert.equal((await engine.stats(scope)).observations, 1);
  });

  it('enqueue batches events and never throws into the caller', async () => {
    for (let i = 0; i < 450; i++) engine.enqueue({ type: 'read', title: `Read module ${i}`, files_read: [`src/m${i}.ts`] }, scope);
    engine.enqueue({ type: 'bad type with spaces' } as never, scope);
    engine.enqueue(null as never, scope);
    await engine.flush();
    assert.equal((await engine.stats(scope)).observations, 450);
    // Few versions: the 450 events were written in a handful of batches, not one by one.
    const versions = fs.readdirSync(path.join(dir, 'observations.lance', '_versions')).length;
    assert.ok(versions < 20, `${versions} versions`);
  });

  it('enqueued events reach the store on their own, without a flush', async () => {
    for (let i = 0; i < 5; i++) engine.enqueue({ type: 'note', title: `background note ${i}` }, scope);
    for (let i = 0; i < 200 && (await engine.stats(scope)).observations < 5; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal((await engine.stats(scope)).observations, 5);
  });

  it('fills vectors in the background and searches them', async () => {
    await engine.observe([{ type: 'note', title: 'Kangaroo routing table' }, { type: 'note', title: 'Unrelated text' }], scope);
    await engine.waitForVectors();
    const stats = await engine.stats(scope);
    assert.equal(stats.cells_with_vectors, stats.cells);
    const hits = await engine.search('kangaroo routing', { scope });
    assert.equal(hits[0].cell.title, 'Kangaroo routing table');
  });

  it('derives entities and weighted relationships from observations', async () => {
    await engine.observe([{ type: 'commit', title: 'Wire auth', commit_sha: 'abcdef1234567', files_modified: ['src/auth.ts', 'src/login.ts'], narrative: 'author: Ada Lovelace', concepts: ['auth'] }], scope);
    await engine.observe([{ type: 'edit', title: 'Edit both', files_modified: ['src/auth.ts', 'src/login.ts'] }], scope);
    const { entities, relationships } = await engine.entities(scope, ['src/auth.ts']);
    assert.equal(entities[0].id, 'file:src/auth.ts');
    const co = relationships.find((r) => r.type === 'co_changed');
    assert.equal(co?.weight, 2);
    assert.ok(relationships.some((r) => r.type === 'modified' && r.source === 'commit:abcdef123456'));
    const author = await engine.entities(scope, ['Ada Lovelace']);
    assert.equal(author.relationships[0]?.type, 'authored');
    await engine.remember({ title: 'Auth lives in one module', text: 'Keep auth logic in src/auth.ts only.', memory_type: 'convention', files: ['src/auth.ts'] }, scope);
    const decided = await engine.entities(scope, ['src/auth.ts']);
    assert.ok(decided.relationships.some((r) => r.type === 'decided' && r.target === 'file:src/auth.ts'));
  });

  it('keeps the last five prompts per session and logs requests', async () => {
    for (let i = 0; i < 8; i++) {
      await engine.addPrompt(scope, 'sess-1', `prompt ${i} with token=abcd1234secret`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const prompts = await engine.recentPrompts(scope, 'sess-1', 10);
    assert.deepEqual(prompts.map((p) => p.split(' ')[1]), ['7', '6', '5', '4', '3']);
    assert.ok(prompts.every((p) => !p.includes('abcd1234secret')));
    assert.equal((await engine.store.rows(TABLES.sessionPrompts, null)).length, 5);
    await engine.logRequest({ request_id: 'r1', tool: 'recall', project: scope.project, session_id: null, arguments: '{"q":"x"}', response: '{}', status: 'ok', duration_ms: 3.5, created_at_epoch: Date.now() });
    await engine.logRequest({ request_id: 'r2', tool: 'recall', project: 'other', session_id: null, arguments: '{}', response: '{}', status: 'ok', duration_ms: 1, created_at_epoch: Date.now() });
    const requests = await engine.listRequests(scope);
    assert.deepEqual(requests.map((r) => r.request_id), ['r1']);
  });

  it('suppresses, touches and promotes', async () => {
    const [o] = await engine.observe([{ type: 'note', title: 'Use vitest for unit tests', narrative: 'We use vitest for unit tests.' }], scope);
    await engine.touch('observation', [o.id], scope);
    assert.ok((await engine.getObservations([o.id], scope))[0].last_accessed_epoch);
    const m = await engine.promote(o.id, scope);
    assert.equal((await engine.search('vitest', { scope, layers: ['L2'] }))[0].cell.source_id, m.id);
    await engine.setStatus('observation', o.id, 'suppressed', scope);
    assert.deepEqual(await engine.getObservations([o.id], scope), []);
    assert.equal((await engine.getObservations([o.id], scope, { includeSuppressed: true })).length, 1);
    assert.equal((await engine.search('vitest', { scope, layers: ['L0'] })).length, 0);
    await assert.rejects(engine.setStatus('observation', o.id, "active' OR 1=1", scope), /unknown status/);
    await assert.rejects(engine.setStatus('observation', o.id, 'active', { project: 'other' }), /No observation/);
  });
});
