// The window's loopback MCP server when the window's folders change. It serves the project of the
// folder it started for; once that folder left the window (removed from a window of several
// repositories, or its remote changed when the folders changed), it went on serving that project
// for the window's life: the agent attached to the window, now working in the other repository,
// read the first one's memory and filed its observations there. (VS Code restarts the extensions
// when the first folder changes: the folders that leave a running window are the others.) A
// definition VS Code hands back was resolved by its label: two projects' folders of one name
// shared it, and one listed before the window changed (its folder removed, replaced by another of
// that name, its remote changed) started the server of whatever project bore the label then. Real
// ScopeService (projects from real git repositories with remotes), real McpServerHost, real HTTP
// servers on a real engine; `vscode` is the window stub.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { folderProject } from '../../src/core/capture/project';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import type { Any, WindowState } from './extensionWindow';
import { Uri, makeStub } from './extensionWindow';
import { gitConfigFile } from '../../src/core/capture/gitConfig';
import { health, windowEngines } from './fixtures/windowServer';
import { withVscodeStub } from './vscodeStub';

const ALPHA = 'github.com/acme/alpha';
const BETA = 'github.com/acme/beta';

function gitRepo(folder: string, remote: string): void {
  fs.mkdirSync(path.join(folder, 'src'), { recursive: true });
  execFileSync('git', ['init', '-q', folder]);
  execFileSync('git', ['-C', folder, 'remote', 'add', 'origin', remote]);
}

/** What an agent asks the server over MCP: retrieve_memory's answer, as text. */
async function retrieve(server: { url: string; token: string }, query: string): Promise<string> {
  try {
    const r = await fetch(server.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'retrieve_memory', arguments: { prompt: query } } }),
    });
    return JSON.stringify(await r.json());
  } catch {
    return '';
  }
}

describe("extension: the window's MCP server when the window's folders change", function () {
  this.timeout(60_000);
  let dir: string;
  let engine: MemoryEngine;
  let state: WindowState;
  let folderChanged: ((e: unknown) => unknown)[];
  let host: Any;
  let scopes: Any;
  let changes: number;
  let logs: string[];
  let servers: RunningHttpServer[] = [];
  /** The McpServerDefinitionProvider the extension registers with VS Code. */
  let provider: Any;
  const folder = (name: string, index: number): WindowState['folders'][number] => ({ uri: Uri.file(path.join(dir, name)), name, index });
  const setFolders = (names: string[]): void => {
    state.folders = names.map((n, i) => folder(n, i));
    for (const l of folderChanged) l({ added: [], removed: [] });
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-server-folders-'));
    gitRepo(path.join(dir, 'alpha'), `https://${ALPHA}.git`);
    gitRepo(path.join(dir, 'beta'), `git@github.com:acme/beta.git`);
    engine = await MemoryEngine.open({ storeUri: path.join(dir, 'store'), embedder: new HashedEmbedder(64), maintenanceIntervalMs: 0, batchDelayMs: 20, summariseOrphanSessions: false });
    await engine.remember({ title: 'quokka rollout plan', text: 'alpha ships the quokka rollout on friday' }, { project: ALPHA });
    await engine.remember({ title: 'quokka beta note', text: 'beta has its own quokka' }, { project: BETA });
    await engine.flush();
  });

  beforeEach(() => {
    state = { folders: [], active: undefined, infos: [], warnings: [], errors: [], panels: [], items: [], handlers: new Map(), folderPick: undefined, folderPicks: [], quickPick: (items) => items[0] };
    const stub = makeStub(state);
    folderChanged = [];
    stub.workspace.onDidChangeWorkspaceFolders = (l: (e: unknown) => unknown) => (folderChanged.push(l), { dispose: () => undefined });
    /* eslint-disable @typescript-eslint/no-require-imports */
    stub.McpHttpServerDefinition = class {
      constructor(
        public label: string,
        public uri: Any,
        public headers: Record<string, string>,
        public version: string,
      ) {}
    };
    stub.lm = { registerMcpServerDefinitionProvider: (_id: string, p: Any) => ((provider = p), { dispose: () => undefined }) };
    const mods = withVscodeStub(stub, () => ({
      scopes: require('../../src/extension/scopes'),
      host: require('../../src/extension/agents/mcpServerHost'),
      provider: require('../../src/extension/agents/mcpDefinitionProvider'),
    }));
    /* eslint-enable @typescript-eslint/no-require-imports */
    // The engine process's server: one at a time, as EngineClient's.
    const window = windowEngines(engine);
    const engines = window.engines;
    servers = window.servers;
    const secrets = new Map<string, string>();
    const secretStorage = { get: async (k: string) => secrets.get(k), store: async (k: string, v: string) => void secrets.set(k, v), delete: async (k: string) => void secrets.delete(k) };
    logs = [];
    // The service's rule (folderProject), which it loads with import(), as tsx cannot here.
    scopes = withVscodeStub(stub, () => new mods.scopes.ScopeService((uri: Any) => folderProject(uri.fsPath).then(({ project }) => ({ project }))));
    host = withVscodeStub(stub, () => new mods.host.McpServerHost(engines, scopes, secretStorage, (m: string) => logs.push(m)));
    changes = 0;
    host.onDidChange(() => changes++);
    mods.provider.registerMcpDefinitionProvider(host, '1.0.0');
  });

  afterEach(async () => {
    await host.stop();
    for (const s of servers.splice(0)) await s.close();
    host.dispose();
    scopes.dispose();
  });

  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the served folder removed from a window of two repositories: alpha's server stops, and the window's server then serves beta", async () => {
    state.folders = [folder('beta', 0), folder('alpha', 1)];
    state.active = { document: { uri: Uri.file(path.join(dir, 'alpha', 'src', 'index.ts')) } };
    const first = await host.start();
    assert.equal((await health(first)).project, ALPHA);
    const baseline = await retrieve(first, 'quokka rollout');
    assert.match(baseline, /alpha ships the quokka/, `the baseline: alpha reads its own memory (${baseline})`);
    const before = changes;

    setFolders(['beta']);
    state.active = undefined;
    // VS Code asks for the definitions again on the change event, and resolves the server anew.
    const next = await host.start();
    const old = await health(first);
    assert.ok(old.status !== 200, `the agent's alpha server (URL and token) still answers, for '${old.project}', in a window of beta alone`);
    assert.doesNotMatch(await retrieve(first, 'quokka rollout'), /alpha ships the quokka/);
    assert.ok(changes > before, 'VS Code is told the server definition changed');
    assert.equal((await health(next)).project, BETA, `the window's server serves '${(await health(next)).project}' in a window of beta alone`);
    assert.equal(next.project, BETA);
    assert.doesNotMatch(await retrieve(next, 'quokka rollout'), /alpha ships the quokka/);
    // What the agent now writes is filed under beta.
    const r = await fetch(`${next.baseUrl}/v1/observations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${next.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'note', title: 'wombat refactor in beta', narrative: 'done in beta' }),
    });
    assert.equal(r.status, 201);
    await engine.flush();
    const stats = await engine.stats({ project: ALPHA });
    const betaStats = await engine.stats({ project: BETA });
    assert.deepEqual([stats.observations, betaStats.observations > 0], [0, true], `alpha ${JSON.stringify(stats)}, beta ${JSON.stringify(betaStats)}`);
  });

  it('a window of two repositories lists a server per project, and each serves its own project only', async () => {
    state.folders = [folder('alpha', 0), folder('beta', 1)];
    // The file the agent's chat began in is alpha's: before, the window's one server served alpha
    // to an agent working in beta too.
    state.active = { document: { uri: Uri.file(path.join(dir, 'alpha', 'src', 'index.ts')) } };
    const defs = await host.definitions();
    assert.deepEqual(
      defs.map((d: Any) => [d.label, d.project, d.folder.name]),
      [
        ['Code Memory (alpha)', ALPHA, 'alpha'],
        ['Code Memory (beta)', BETA, 'beta'],
      ],
    );
    const a = await host.start(defs[0].folder);
    const b = await host.start(defs[1].folder);
    assert.deepEqual([(await health(a)).project, (await health(b)).project, a.project, b.project], [ALPHA, BETA, ALPHA, BETA]);
    assert.notEqual(a.url, b.url);
    assert.equal((await health({ baseUrl: b.baseUrl, token: a.token })).status, 401, "alpha's token opens beta's server");
    const fromBeta = await retrieve(b, 'quokka rollout');
    assert.match(fromBeta, /beta has its own quokka/);
    assert.doesNotMatch(fromBeta, /alpha ships the quokka/, "beta's server answered alpha's memory");
    // A second ask for a project's server gets the running one, whichever of its folders asks.
    assert.equal((await host.start(defs[1].folder)).url, b.url);
    assert.deepEqual(
      (await host.definitions()).map((d: Any) => d.server?.url),
      [a.url, b.url],
    );

    // alpha leaves the window: its server stops, beta's goes on at its address, and the window
    // lists one server again.
    const before = changes;
    setFolders(['beta']);
    const after = await host.definitions();
    assert.deepEqual(after.map((d: Any) => [d.label, d.project, d.server?.url]), [['Code Memory', BETA, b.url]]);
    assert.ok((await health(a)).status !== 200, "alpha's server still answers in a window of beta alone");
    assert.equal((await health(b)).project, BETA);
    assert.ok(changes > before, 'VS Code is told the definitions changed');
  });

  it("VS Code's definitions: one per project, each resolved to its project's server behind its own token", async () => {
    state.folders = [folder('alpha', 0), folder('beta', 1)];
    state.active = { document: { uri: Uri.file(path.join(dir, 'alpha', 'src', 'index.ts')) } };
    const listed = await provider.provideMcpServerDefinitions();
    assert.deepEqual(
      listed.map((d: Any) => [d.label, d.uri.toString(), d.headers]),
      [
        ['Code Memory (alpha)', 'http://127.0.0.1:0/v1/mcp/memory', { 'X-Code-Memory-Project': ALPHA }],
        ['Code Memory (beta)', 'http://127.0.0.1:0/v1/mcp/memory', { 'X-Code-Memory-Project': BETA }],
      ],
      'listing starts nothing and gives no token, only the project each definition is for',
    );
    assert.equal(servers.length, 0);
    // VS Code starts beta's server: what the agent reads through it is beta's.
    const resolved = await provider.resolveMcpServerDefinition({ ...listed[1] });
    const url = resolved.uri.toString();
    const token = String(resolved.headers.Authorization).replace(/^Bearer /, '');
    const answer = await retrieve({ url, token }, 'quokka rollout');
    assert.match(answer, /beta has its own quokka/);
    assert.doesNotMatch(answer, /alpha ships the quokka/);
    assert.equal(servers.length, 1, 'only the server VS Code started runs');
    // A definition whose folder left the window is not started for whatever project is there now.
    setFolders(['beta']);
    await assert.rejects(provider.resolveMcpServerDefinition({ ...listed[0] }), /Code Memory \(alpha\): its folder is no longer in this window/);
  });

  it('two folders of different projects with one name (in different parents): two definitions, each resolved to its own project', async () => {
    gitRepo(path.join(dir, 'one', 'api'), `https://${ALPHA}.git`);
    gitRepo(path.join(dir, 'two', 'api'), `https://${BETA}.git`);
    state.folders = [
      { uri: Uri.file(path.join(dir, 'one', 'api')), name: 'api', index: 0 },
      { uri: Uri.file(path.join(dir, 'two', 'api')), name: 'api', index: 1 },
    ];
    const listed = await provider.provideMcpServerDefinitions();
    assert.equal(listed.length, 2);
    // VS Code tells a provider's servers apart by their labels.
    assert.notEqual(listed[0].label, listed[1].label, 'two servers of the window listed under one label');
    const projects: string[] = [];
    for (const d of listed) {
      const resolved = await provider.resolveMcpServerDefinition({ ...d });
      projects.push(String((await health({ baseUrl: resolved.uri.toString().replace(/\/v1\/mcp\/memory$/, ''), token: String(resolved.headers.Authorization).replace(/^Bearer /, '') })).project));
    }
    assert.deepEqual(projects, [ALPHA, BETA], "the second definition serves the first one's project");
  });

  it("a definition handed back after its folder was replaced by another project's folder of the same name starts nothing", async () => {
    gitRepo(path.join(dir, 'other', 'beta'), 'https://github.com/acme/gamma.git');
    state.folders = [folder('alpha', 0), folder('beta', 1)];
    const listed = await provider.provideMcpServerDefinitions();
    assert.equal(listed[1].label, 'Code Memory (beta)');
    state.folders = [folder('alpha', 0), { uri: Uri.file(path.join(dir, 'other', 'beta')), name: 'beta', index: 1 }];
    for (const l of folderChanged) l({ added: [], removed: [] });
    // VS Code resolves the beta definition it listed before it asked for the list again.
    const resolved = await provider.resolveMcpServerDefinition({ ...listed[1] }).catch((err: Error) => err);
    const served = servers.map((s) => s.url);
    assert.ok(resolved instanceof Error, `beta's definition was started, for ${resolved instanceof Error ? '' : String(resolved.uri)}`);
    assert.deepEqual(served, [], 'a server started for a project the definition was not listed for');
  });

  it('a start for a folder that left the window while it waited starts nothing', async () => {
    state.folders = [folder('alpha', 0), folder('beta', 1)];
    const defs = await host.definitions();
    // VS Code resolves beta's definition (found among the definitions), and beta leaves the window
    // before the start.
    setFolders(['alpha']);
    const started = await host.start(defs[1].folder).catch((err: Error) => err);
    assert.ok(started instanceof Error, `a server of ${started instanceof Error ? '' : started.project} runs in a window of alpha alone`);
    assert.deepEqual(servers.length, 0);
    assert.deepEqual((await host.definitions()).map((d: Any) => d.project), [ALPHA]);
  });

  it("a start for a definition's folder whose project changed meanwhile starts nothing for the new project", async () => {
    state.folders = [folder('alpha', 0), folder('beta', 1)];
    const listed = await provider.provideMcpServerDefinitions();
    execFileSync('git', ['-C', path.join(dir, 'beta'), 'remote', 'set-url', 'origin', 'https://github.com/acme/delta.git']);
    try {
      const resolved = await provider.resolveMcpServerDefinition({ ...listed[1] }).catch((err: Error) => err);
      const served = await Promise.all(servers.map((s) => health(s)));
      assert.ok(resolved instanceof Error, `beta's definition was started for ${JSON.stringify(served)}`);
    } finally {
      execFileSync('git', ['-C', path.join(dir, 'beta'), 'remote', 'set-url', 'origin', 'git@github.com:acme/beta.git']);
    }
  });

  it('a start under way when the host is disposed (the window closing) starts no server', async () => {
    state.folders = [folder('alpha', 0), folder('beta', 1)];
    const defs = await host.definitions();
    // VS Code resolves beta's definition as the window closes.
    const starting = host.start(defs[1].folder);
    host.dispose();
    const started = await starting.catch((err: Error) => err);
    assert.deepEqual(
      servers.map((s) => s.url),
      [],
      `a server runs after the host was disposed (the start gave ${started instanceof Error ? started.message : started.url})`,
    );
  });

  it('two folders of one project list one server; a folder of a new project added is listed once the folders change', async () => {
    fs.mkdirSync(path.join(dir, 'alpha-docs'), { recursive: true });
    execFileSync('git', ['init', '-q', path.join(dir, 'alpha-docs')]);
    execFileSync('git', ['-C', path.join(dir, 'alpha-docs'), 'remote', 'add', 'origin', `https://${ALPHA}.git`]);
    state.folders = [folder('alpha', 0), folder('alpha-docs', 1)];
    assert.deepEqual((await host.definitions()).map((d: Any) => [d.label, d.project]), [['Code Memory', ALPHA]]);
    const before = changes;
    setFolders(['alpha', 'alpha-docs', 'beta']);
    assert.deepEqual(
      (await host.definitions()).map((d: Any) => [d.label, d.project]),
      [
        ['Code Memory (alpha)', ALPHA],
        ['Code Memory (beta)', BETA],
      ],
    );
    assert.ok(changes > before, 'VS Code is told to list the servers again');
  });

  it('a folder added beside the one served, or another one removed: the server goes on serving it, at the same address', async () => {
    state.folders = [folder('alpha', 0), folder('beta', 1)];
    const first = await host.start();
    setFolders(['alpha']);
    setFolders(['alpha', 'beta']);
    const again = await host.start();
    assert.equal(again.url, first.url);
    assert.equal((await health(first)).project, ALPHA);
  });

  it("the served folder's remote changed, then the folders changed: the server of the old remote's project stops", async () => {
    state.folders = [folder('alpha', 0)];
    const first = await host.start();
    assert.equal((await health(first)).project, ALPHA);
    execFileSync('git', ['-C', path.join(dir, 'alpha'), 'remote', 'set-url', 'origin', 'https://github.com/acme/alpha-renamed.git']);
    try {
      setFolders(['alpha', 'beta']);
      // The folder's project is computed again on the change; the server follows it.
      const next = await host.start();
      assert.equal((await health(next)).project, 'github.com/acme/alpha-renamed');
      assert.notEqual((await health(first)).project, ALPHA);
    } finally {
      execFileSync('git', ['-C', path.join(dir, 'alpha'), 'remote', 'set-url', 'origin', `https://${ALPHA}.git`]);
    }
  });

  it("the served folder's remote changed with no folder change: the window names it as the CLI then does, and the old project's server stops", async () => {
    state.folders = [folder('alpha', 0)];
    const uri = Uri.file(path.join(dir, 'alpha')).toString();
    const first = await host.start();
    assert.equal((await health(first)).project, ALPHA);
    execFileSync('git', ['-C', path.join(dir, 'alpha'), 'remote', 'set-url', 'origin', 'https://github.com/acme/alpha-moved.git']);
    try {
      const cli = (await folderProject(path.join(dir, 'alpha'))).project;
      assert.equal(cli, 'github.com/acme/alpha-moved');
      // Capture asks for the folder's project at each event: the next one sees the new remote.
      assert.equal((await scopes.scopeFor(uri)).project, cli);
      const next = await host.start();
      assert.equal((await health(next)).project, cli);
      assert.notEqual((await health(first)).project, ALPHA, "the old remote's server still answers");
      // Asked again with the config as it is: the same scope, nothing restarted.
      const changesBefore = changes;
      assert.equal((await scopes.scopeFor(uri)).project, cli);
      assert.equal((await host.start()).url, next.url);
      assert.equal(changes, changesBefore);
    } finally {
      execFileSync('git', ['-C', path.join(dir, 'alpha'), 'remote', 'set-url', 'origin', `https://${ALPHA}.git`]);
    }
  });
});

describe('gitConfigFile: the config a folder of a repository is named by', () => {
  it('finds it from a subfolder, a worktree and a submodule-like .git file; null outside a repository', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-git-config-'));
    try {
      const repo = path.join(dir, 'repo');
      gitRepo(repo, 'https://github.com/acme/repo.git');
      execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'first']);
      const config = fs.realpathSync(path.join(repo, '.git', 'config'));
      const real = (f: string | null): string | null => (f ? fs.realpathSync(f) : f);
      assert.equal(real(gitConfigFile(path.join(repo, 'src'))), config);
      execFileSync('git', ['-C', repo, 'worktree', 'add', '-q', path.join(dir, 'tree')]);
      assert.equal(real(gitConfigFile(path.join(dir, 'tree'))), config);
      const plain = path.join(dir, 'plain');
      fs.mkdirSync(plain);
      assert.equal(gitConfigFile(plain), null);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
