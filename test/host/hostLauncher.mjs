// Starts a real VS Code (code-server, cached in .vscode-host/ by scripts/setup.sh) and a headless
// Chromium page on its workbench. Shared by the host test runner, the e2e check and `npm start`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const hostCacheDir = path.join(repoRoot, '.vscode-host');
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Flags measured to keep headless Chromium quiet and offline-safe on CI machines.
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export class HostError extends Error {}

/** Paths of the cached host, as written by scripts/setup.sh after it validated the install. */
export function cachedHost() {
  const manifestPath = path.join(hostCacheDir, 'host.json');
  const hint = 'Install it with `bash scripts/setup.sh` (about 150 s, cached in .vscode-host/).';
  if ((!existsSync(manifestPath) || !existsSync(chromiumPath)) && process.env.CODE_MEMORY_NO_HOST_INSTALL !== '1') {
    // A fresh clone after `npm ci`: install the host once, so `npm start` and `npm test` just work.
    console.error('host: the VS Code host is not installed yet; running scripts/setup.sh --skip-npm-ci once (a few minutes)');
    spawnSync('bash', [path.join(repoRoot, 'scripts/setup.sh'), '--skip-npm-ci'], { cwd: repoRoot, stdio: 'inherit' });
  }
  if (!existsSync(manifestPath)) {
    throw new HostError(`The code-server host is not installed (${manifestPath} missing). ${hint}`);
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const node = path.join(hostCacheDir, manifest.node);
  const entry = path.join(hostCacheDir, manifest.codeServerEntry);
  for (const file of [node, entry]) {
    if (!existsSync(file)) throw new HostError(`The cached code-server host is incomplete (${file} missing). ${hint}`);
  }
  if (!existsSync(chromiumPath)) {
    throw new HostError(`Chromium not found at ${chromiumPath}. Install the Debian package \`chromium\` or set CHROMIUM_PATH.`);
  }
  return { node, entry, codeServerVersion: manifest.codeServerVersion, nodeVersion: manifest.nodeVersion };
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function freshDirs(prefix) {
  const base = mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const dirs = {
    base,
    userData: path.join(base, 'user-data'),
    extensions: path.join(base, 'extensions'),
    xdgConfig: path.join(base, 'xdg-config'),
    xdgData: path.join(base, 'xdg-data'),
    xdgCache: path.join(base, 'xdg-cache'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  return dirs;
}

function hostEnv(dirs, extra) {
  return {
    ...process.env,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CACHE_HOME: dirs.xdgCache,
    LANCEDB_LOG: process.env.LANCEDB_LOG ?? 'error',
    ...extra,
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts code-server on 127.0.0.1 with fresh user data, extensions and XDG folders, in its own
 * process group. `install` lists VSIX files installed (with --install-extension) before start;
 * `settings` adds user settings; `env` adds environment variables for the server and its hosts.
 * `smokeTestDriver` (default true) lets the page URL load a development extension and tests
 * (see workbenchUrl), but the workbench then shows no notification toasts at all: notifications
 * only reach the notification center. Pass false to see the workbench as a user does.
 * Returns { url, port, origin, workspace, dirs, stop, remoteUri(absPath) }.
 */
export async function startCodeServer(options = {}) {
  const host = cachedHost();
  const workspace = options.workspace ?? repoRoot;
  const dirs = freshDirs(options.prefix ?? 'code-memory-host');
  const env = hostEnv(dirs, options.env);
  // A quiet workbench: no welcome page, tips or secondary side bar covering screenshots.
  const settings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    ...options.settings,
  };
  mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  writeFileSync(path.join(dirs.userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  const log = options.log ?? (() => {});
  const baseArgs = [host.entry, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];

  for (const vsix of options.install ?? []) {
    const result = spawnSync(host.node, [...baseArgs, '--install-extension', vsix, '--force'], {
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    log(`[code-server install] ${(result.stdout ?? '').trim()} ${(result.stderr ?? '').trim()}`);
    if (result.status !== 0) {
      throw new HostError(`code-server could not install ${vsix} (exit ${result.status}): ${result.stderr || result.stdout}`);
    }
  }

  const port = options.port ?? (await freePort());
  const origin = `http://127.0.0.1:${port}`;
  const args = [
    ...baseArgs,
    '--bind-addr', `127.0.0.1:${port}`,
    '--auth', 'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    ...(options.smokeTestDriver === false ? [] : ['--vscode-option', 'enable-smoke-test-driver']),
    workspace,
  ];
  const child = spawn(host.node, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk) => {
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    for (const line of text.split('\n')) if (line.trim()) log(`[code-server] ${line}`);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  let exited = null;
  child.once('exit', (code, signal) => {
    exited = { code, signal };
  });

  let stopped = false;
  const killGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  };
  const onProcessExit = () => killGroup('SIGKILL');
  process.on('exit', onProcessExit);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    killGroup('SIGTERM');
    for (let i = 0; i < 50 && exited === null; i++) await sleep(100);
    killGroup('SIGKILL');
    process.off('exit', onProcessExit);
    if (!options.keepDirs) rmSync(dirs.base, { recursive: true, force: true, maxRetries: 3 });
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited !== null) {
      await stop();
      throw new HostError(`code-server exited before it was ready (code ${exited.code}, signal ${exited.signal}). Output:\n${output}`);
    }
    try {
      const response = await fetch(`${origin}/healthz`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new HostError(`code-server did not answer on ${origin} within ${options.startTimeoutMs ?? 60_000} ms. Output:\n${output}`);
    }
    await sleep(250);
  }

  const remoteUri = (absPath) => `vscode-remote://127.0.0.1:${port}${absPath}`;
  return { url: `${origin}/?${opened(workspace)}`, port, origin, workspace, dirs, stop, remoteUri, output: () => output };
}

/** The page URL's query naming what the window opens: a folder, or the folders of a .code-workspace file. */
function opened(workspace) {
  return `${workspace.endsWith('.code-workspace') ? 'workspace' : 'folder'}=${encodeURIComponent(workspace)}`;
}

/**
 * The workbench URL that loads a development extension and, optionally, runs extension tests.
 * The CLI rejects --extensionDevelopmentPath; the page URL's payload accepts it when the server
 * runs with enable-smoke-test-driver.
 */
export function workbenchUrl(server, { extensionDevelopmentPath, extensionTestsPath } = {}) {
  const payload = [['skipWelcome', 'true']];
  if (extensionDevelopmentPath) payload.push(['extensionDevelopmentPath', server.remoteUri(extensionDevelopmentPath)]);
  if (extensionTestsPath) payload.push(['extensionTestsPath', server.remoteUri(extensionTestsPath)]);
  return `${server.origin}/?${opened(server.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

/**
 * Headless Chromium with a fresh profile. `onLog(type, args)` and `onExit(code)` receive what
 * the workbench reports through window.codeAutomationLog / codeAutomationExit (extension tests).
 */
export async function launchBrowser(options = {}) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: options.headless ?? true,
    args: chromiumArgs,
    timeout: 60_000,
  });
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1440, height: 900 } });
  const page = await context.newPage();
  if (options.onLog) await page.exposeFunction('codeAutomationLog', (type, args) => options.onLog(type, args));
  if (options.onExit) await page.exposeFunction('codeAutomationExit', (code) => options.onExit(code));
  const close = async () => {
    await browser.close().catch(() => {});
  };
  return { browser, context, page, close };
}

/** Waits until the workbench has rendered its activity bar. */
export async function waitForWorkbench(page, timeoutMs = 90_000) {
  await page.locator('.monaco-workbench .activitybar').first().waitFor({ state: 'visible', timeout: timeoutMs });
}

/** Runs a command from the palette: F1, type its title, Enter. */
/**
 * Runs a command from the palette. The workbench is clicked first, so that F1 reaches it whatever
 * had focus (a webview keeps its keys); `keepFocus` skips that click, for a command that reads
 * the editor's selection: the click can land in the editor and move its cursor.
 */
export async function runFromPalette(page, title, { keepFocus = false } = {}) {
  if (!keepFocus) await page.locator('.monaco-workbench').first().click({ position: { x: 700, y: 400 } }).catch(() => {});
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  // On a busy machine the palette sometimes keeps its previous list, hidden, after the text is
  // typed: the text is typed again (no Escape or click: in a walkthrough they leave it).
  for (let attempt = 1; ; attempt++) {
    await input.fill(`>${title}`);
    try {
      await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ state: 'visible', timeout: 10_000 });
      break;
    } catch (error) {
      if (attempt >= 3) throw error;
      await input.fill('>');
    }
  }
  await page.keyboard.press('Enter');
}

/**
 * Ends `cleanup` on Ctrl-C / SIGTERM too, so no code-server or browser outlives the script.
 * Returns what removes it again.
 */
export function onInterrupt(cleanup) {
  const handler = async (signal) => {
    await cleanup().catch(() => {});
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  // For a run that cleaned up and lets another begin (a second window).
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
