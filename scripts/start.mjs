// `npm start`: build, then run the extension in a real VS Code (code-server on 127.0.0.1) on a
// demo workspace (.demo/, a small git repository), with esbuild watching for changes. Prints the
// URL to open; Ctrl-C stops everything it started.
//   node scripts/start.mjs [--port N] [--no-watch] [--screenshot file.png]
// --screenshot opens the URL in headless Chromium, saves a picture of the workbench and exits
// (a smoke check of what a browser pointed at the URL shows).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  HostError,
  launchBrowser,
  onInterrupt,
  repoRoot,
  startCodeServer,
  waitForWorkbench,
  workbenchUrl,
} from '../test/host/hostLauncher.mjs';

function option(name) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const demoDir = path.join(repoRoot, '.demo');

/** A small project with some history, so git import, capture and recall have material. */
function ensureDemoWorkspace() {
  const workspace = path.join(demoDir, 'workspace');
  if (existsSync(path.join(workspace, '.git'))) return workspace;
  mkdirSync(path.join(workspace, 'src'), { recursive: true });
  const git = (...args) =>
    execFileSync('git', ['-C', workspace, '-c', 'user.name=Demo Developer', '-c', 'user.email=demo@example.invalid', ...args]);
  execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
  const commit = (message, files) => {
    for (const [file, text] of Object.entries(files)) writeFileSync(path.join(workspace, file), text);
    git('add', '.');
    git('commit', '-q', '-m', message);
  };
  commit('Add a price formatter', {
    'README.md': '# Demo shop\n\nA tiny project for trying Code Memory.\n',
    'src/price.ts': 'export function formatPrice(cents: number): string {\n  return `$${(cents / 100).toFixed(2)}`;\n}\n',
  });
  commit('Round half-cent prices up instead of truncating them', {
    'src/price.ts':
      'export function formatPrice(cents: number): string {\n  return `$${(Math.round(cents) / 100).toFixed(2)}`;\n}\n',
  });
  commit('Cart totals with a per-order discount code', {
    'src/cart.ts':
      "import { formatPrice } from './price';\n\nexport interface Line { sku: string; cents: number; quantity: number }\n\n" +
      'export function cartTotal(lines: Line[], discountPercent = 0): string {\n' +
      '  const cents = lines.reduce((sum, line) => sum + line.cents * line.quantity, 0);\n' +
      '  return formatPrice(cents * (1 - discountPercent / 100));\n}\n',
  });
  return workspace;
}

async function main() {
  const build = spawnSync(process.execPath, ['esbuild.config.mjs'], { cwd: repoRoot, stdio: 'inherit' });
  if (build.status !== 0) throw new HostError('the build failed');

  const workspace = ensureDemoWorkspace();
  const screenshot = option('--screenshot');
  const children = [];
  let server;
  let browser;
  const cleanup = async () => {
    for (const child of children) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    await browser?.close();
    await server?.stop();
  };
  onInterrupt(cleanup);

  // The demo keeps its own store so trying the product never touches the real one, unless
  // CODE_MEMORY_STORE names one (set but empty names none, as the extension reads it).
  const named = process.env.CODE_MEMORY_STORE?.trim() || undefined;
  const store = named ?? path.join(demoDir, 'store');
  server = await startCodeServer({
    workspace,
    port: option('--port') ? Number(option('--port')) : undefined,
    prefix: 'code-memory-start',
    env: { CODE_MEMORY_STORE: store },
  });
  const url = workbenchUrl(server, { extensionDevelopmentPath: repoRoot });

  if (screenshot) {
    browser = await launchBrowser();
    await browser.page.goto(url);
    await waitForWorkbench(browser.page);
    await browser.page.locator('.activitybar [aria-label^="Code Memory"]').first().click({ timeout: 30_000 });
    await browser.page.waitForTimeout(3000);
    mkdirSync(path.dirname(path.resolve(screenshot)), { recursive: true });
    await browser.page.screenshot({ path: screenshot });
    console.log(`start: screenshot of ${server.origin} saved to ${screenshot}`);
    await cleanup();
    return;
  }

  if (!process.argv.includes('--no-watch')) {
    const watcher = spawn(process.execPath, ['esbuild.config.mjs', '--watch'], { cwd: repoRoot, stdio: 'inherit', detached: true });
    children.push(watcher);
    process.on('exit', () => {
      try {
        process.kill(-watcher.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    });
  }

  console.log(`
Code Memory is running in VS Code (code-server on ${server.origin}), loaded from this folder in development mode.

  Open: ${url}

Workspace: ${path.relative(process.cwd(), workspace) || workspace}   Store: ${named ? store : path.relative(process.cwd(), store)}
esbuild rebuilds on change; run "Developer: Reload Window" in the workbench to pick changes up.
Press Ctrl-C to stop.`);
  await new Promise(() => {});
}

main().catch(async (error) => {
  console.error(`\nstart: FAILED: ${error instanceof HostError ? error.message : (error?.stack ?? String(error))}`);
  process.exit(1);
});
