// Runs the host suites (out/host/**/*.test.js) inside a real VS Code extension host: code-server's
// Node extension host, driven by headless Chromium: first in a window of one repository, then the
// suites named *.twoFolders.test.js in a window of two repositories of different projects (a
// .code-workspace file; not when CODE_MEMORY_HOST_GREP picks suites). Exits with the hosts'
// exit code; any failure to start or finish is a loud non-zero exit, never a skip.
//   node test/host/runCodeServer.mjs [--no-build]     env: CODE_MEMORY_HOST_GREP, CODE_MEMORY_HOST_TIMEOUT_MS,
//   CODE_MEMORY_HOST_STORE (a store for benchmarks; a fresh temporary one otherwise),
//   CODE_MEMORY_HOST_SETTINGS (user settings as JSON, for benchmarks), CODE_MEMORY_HOST_WINDOWS
//   (`one`, `two` or `one,two`: which windows run)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { format } from 'node:util';
import { HostError, launchBrowser, onInterrupt, repoRoot, startCodeServer, workbenchUrl } from './hostLauncher.mjs';

const timeoutMs = Number(process.env.CODE_MEMORY_HOST_TIMEOUT_MS ?? 600_000);
const verbose = Boolean(process.env.CODE_MEMORY_HOST_VERBOSE);
// Lines the suites print carry this prefix (see index.ts); the rest is workbench logging, kept
// for the failure report.
const marker = '\u2063[host-test] ';
const workbenchLog = [];
// Offline chatter from built-in features (GitHub auth, chat models): harmless, hides real errors.
const noise = /\[(AgentHost|AccountPolicyGate|ChatModelSelection|GitHub|Copilot)[^\]]*\]|api\.github\.com|open-vsx|authentication provider|Gallery|^\s+at .*\/static\/out\/vs\//i;

function fail(message) {
  console.error(`\nHOST TESTS FAILED: ${message}`);
  process.exitCode = 1;
}

/** A small git repository as the workspace, so suites can exercise capture on real files; `remote` names its origin. */
function makeWorkspace(base, name = 'workspace', remote = undefined) {
  const workspace = path.join(base, name);
  execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
  writeFileSync(path.join(workspace, 'README.md'), '# Host test workspace\n');
  writeFileSync(path.join(workspace, 'index.js'), 'export function add(a, b) {\n  return a + b;\n}\n');
  const git = (...args) => execFileSync('git', ['-C', workspace, '-c', 'user.name=Host Test', '-c', 'user.email=host@test.invalid', ...args]);
  git('add', '.');
  git('commit', '-q', '-m', 'Initial commit');
  if (remote) git('remote', 'add', 'origin', remote);
  return workspace;
}

/** Two repositories of different projects (their remotes) in one window: a .code-workspace file. */
function makeTwoFolderWorkspace(base) {
  const folders = ['alpha', 'beta'].map((name) => makeWorkspace(base, name, `https://example.invalid/acme/${name}.git`));
  const file = path.join(base, 'two.code-workspace');
  writeFileSync(file, JSON.stringify({ folders: folders.map((f) => ({ path: f })) }, null, 2));
  return file;
}

async function main() {
  if (!process.argv.includes('--no-build')) {
    const build = spawnSync(process.execPath, ['esbuild.config.mjs'], { cwd: repoRoot, stdio: 'inherit' });
    if (build.status !== 0) throw new HostError('the build failed');
  }
  const testsIndex = path.join(repoRoot, 'out/host/index.js');
  if (!existsSync(testsIndex)) throw new HostError(`${testsIndex} missing: the build did not produce the host suites`);
  if (!existsSync(path.join(repoRoot, 'dist/extension.js'))) throw new HostError('dist/extension.js missing: the build did not produce the extension');

  // A benchmark's run (CODE_MEMORY_HOST_GREP) needs the first window only.
  const windows = (process.env.CODE_MEMORY_HOST_WINDOWS ?? (process.env.CODE_MEMORY_HOST_GREP ? 'one' : 'one,two')).split(',');
  if (windows.includes('one')) await runHost(testsIndex, 'one repository', (base) => makeWorkspace(base), 'one');
  if (windows.includes('two')) await runHost(testsIndex, 'two repositories', makeTwoFolderWorkspace, 'twoFolders');
}

/** One code-server window on what `workspaceOf` makes, running the suites of `suites` (see index.ts). */
async function runHost(testsIndex, what, workspaceOf, suites) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'code-memory-hosttest-'));
  const workspace = workspaceOf(base);
  let server;
  let browser;
  const cleanup = async () => {
    await browser?.close();
    await server?.stop();
    rmSync(base, { recursive: true, force: true });
  };
  const interruptible = onInterrupt(cleanup);

  try {
    const started = Date.now();
    server = await startCodeServer({
      workspace,
      prefix: 'code-memory-host',
      settings: process.env.CODE_MEMORY_HOST_SETTINGS ? JSON.parse(process.env.CODE_MEMORY_HOST_SETTINGS) : undefined,
      // The extension must never touch the user's real store during tests.
      env: { CODE_MEMORY_STORE: process.env.CODE_MEMORY_HOST_STORE || path.join(base, 'store'), CODE_MEMORY_HOST_GREP: process.env.CODE_MEMORY_HOST_GREP ?? '', CODE_MEMORY_HOST_MARK: '1', CODE_MEMORY_HOST_SUITES: suites },
      log: verbose ? (line) => console.error(line) : undefined,
    });
    console.log(`host: code-server ready on ${server.origin} (${Date.now() - started} ms), a window of ${what}`);

    let settle;
    const exitCode = new Promise((resolve) => (settle = resolve));
    browser = await launchBrowser({
      onLog: (type, args) => {
        const text = Array.isArray(args) ? format(...args) : String(args);
        for (const line of text.split('\n')) {
          const at = line.indexOf(marker);
          if (at >= 0) process.stdout.write(`${line.slice(at + marker.length)}\n`);
          else if (verbose) process.stderr.write(`[workbench ${type}] ${line}\n`);
          else if (!noise.test(line)) {
            workbenchLog.push(`[workbench ${type}] ${line}`);
            if (workbenchLog.length > 80) workbenchLog.shift();
          }
        }
      },
      onExit: (code) => settle({ code }),
    });
    browser.page.on('crash', () => settle({ error: 'the workbench page crashed' }));
    browser.page.on('pageerror', (error) => verbose && console.error(`[page] ${error.message}`));
    const timer = setTimeout(() => settle({ error: `no result from the extension host within ${timeoutMs} ms` }), timeoutMs);

    // The run's own timer bounds the wait; a loaded machine can take over 30 s (Playwright's
    // default) to fire the page's load event, though the workbench starts fine.
    await browser.page.goto(workbenchUrl(server, { extensionDevelopmentPath: repoRoot, extensionTestsPath: testsIndex }), { waitUntil: 'commit', timeout: timeoutMs });
    const result = await exitCode;
    clearTimeout(timer);
    if (result.error) {
      throw new HostError(
        `${result.error}.\nLast workbench log lines:\n${workbenchLog.slice(-15).join('\n')}\nLast code-server output:\n${server.output().slice(-4000)}`,
      );
    }
    console.log(`host: extension host exited with code ${result.code} after ${Date.now() - started} ms`);
    if (result.code !== 0) {
      if (!verbose) console.error(`Last workbench log lines:\n${workbenchLog.slice(-15).join('\n')}`);
      fail(`the extension host reported exit code ${result.code}`);
    }
  } finally {
    await cleanup();
    interruptible();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    fail(error instanceof HostError ? error.message : (error?.stack ?? String(error)));
    process.exit(1);
  },
);
