// End-to-end: package the VSIX, install it into a fresh code-server with --install-extension,
// open the workbench in headless Chromium and run every step of test/e2e/*.e2e.mjs, saving
// screenshots to .test-results/e2e/. Any failed step, or a host that cannot start, exits non-zero.
//   node test/e2e/run.mjs [--vsix file.vsix] [--headed] [--readme-screenshots]
// --readme-screenshots copies the screenshots that passing steps mark `readme` into
// docs/screenshots/ (the README's images), replacing the ones there.
import { spawnSync, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { HostError, launchBrowser, onInterrupt, repoRoot, runFromPalette, startCodeServer, waitForWorkbench } from '../host/hostLauncher.mjs';

const resultsDir = path.join(repoRoot, '.test-results/e2e');
const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));

function option(name) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

function packageVsix() {
  const vsixDir = path.join(resultsDir, 'vsix');
  rmSync(vsixDir, { recursive: true, force: true });
  const target = `${process.platform}-${process.arch === 'arm64' ? 'arm64' : 'x64'}`;
  const result = spawnSync(process.execPath, ['scripts/package.mjs', '--target', target, '--out-dir', vsixDir], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  // vsce's file tree is long; keep only the summary lines.
  for (const line of result.stdout.split('\n')) if (/^(package:|\|| DONE| WARNING)/.test(line)) console.log(line);
  if (result.status !== 0) throw new HostError('packaging the VSIX failed');
  const vsix = readdirSync(vsixDir).find((f) => f.endsWith('.vsix'));
  if (!vsix) throw new HostError(`no VSIX in ${vsixDir}`);
  return path.join(vsixDir, vsix);
}

function makeWorkspace(base) {
  const workspace = path.join(base, 'workspace');
  execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
  writeFileSync(path.join(workspace, 'README.md'), '# e2e workspace\n');
  writeFileSync(path.join(workspace, 'math.ts'), 'export function add(a: number, b: number): number {\n  return a + b;\n}\n');
  const git = (...args) => execFileSync('git', ['-C', workspace, '-c', 'user.name=E2E', '-c', 'user.email=e2e@test.invalid', ...args]);
  git('add', '.');
  git('commit', '-q', '-m', 'Add math helpers');
  return workspace;
}

async function loadSteps() {
  const here = path.join(repoRoot, 'test/e2e');
  const files = readdirSync(here).filter((f) => f.endsWith('.e2e.mjs')).sort((a, b) => (a === 'core.e2e.mjs' ? -1 : b === 'core.e2e.mjs' ? 1 : a.localeCompare(b)));
  const all = [];
  for (const file of files) {
    const module = await import(pathToFileURL(path.join(here, file)).href);
    if (!Array.isArray(module.steps)) throw new HostError(`${file} must export \`steps\`, an array of { name, run(ctx) }`);
    for (const step of module.steps) all.push({ ...step, file });
  }
  // --grep <a|b>: only the steps whose name contains one of the texts (a debugging aid; order kept).
  const grep = option('--grep');
  return grep ? all.filter((s) => grep.split('|').some((g) => s.name.includes(g))) : all;
}

async function main() {
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });
  const vsix = option('--vsix') ? path.resolve(option('--vsix')) : packageVsix();
  const steps = await loadSteps();

  const base = mkdtempSync(path.join(os.tmpdir(), 'code-memory-e2e-'));
  const workspace = makeWorkspace(base);
  let server;
  let browser;
  const cleanup = async () => {
    await browser?.close();
    await server?.stop();
    rmSync(base, { recursive: true, force: true });
  };
  onInterrupt(cleanup);

  let failures = 0;
  try {
    // The VSIX is installed, so no smoke-test driver: with it the workbench shows no toasts.
    server = await startCodeServer({
      workspace,
      install: [vsix],
      prefix: 'code-memory-e2e',
      env: { CODE_MEMORY_STORE: path.join(base, 'store') },
      smokeTestDriver: false,
    });
    console.log(`e2e: installed ${path.basename(vsix)} into code-server on ${server.origin}`);
    browser = await launchBrowser({ headless: !process.argv.includes('--headed') });
    const { page } = browser;
    // waitForWorkbench bounds the wait; the page's load event alone can take over 30 s here.
    await page.goto(server.url, { waitUntil: 'commit', timeout: 120_000 });
    await waitForWorkbench(page).catch((error) => {
      throw new HostError(`the workbench did not render: ${error.message}`);
    });

    let shot = 0;
    const readmeShots = [];
    const context = {
      page,
      server,
      workspace,
      manifest,
      resultsDir,
      runFromPalette: (title, options) => runFromPalette(page, title, options),
      commandTitle: (id) => {
        const command = manifest.contributes.commands.find((c) => c.command === id);
        if (!command) throw new Error(`package.json contributes no command ${id}`);
        return command.category ? `${command.category}: ${command.title}` : command.title;
      },
      screenshot: async (name, { readme = false } = {}) => {
        const file = path.join(resultsDir, `${String(++shot).padStart(2, '0')}-${name}.png`);
        await page.screenshot({ path: file });
        console.log(`e2e:   screenshot ${path.relative(repoRoot, file)}`);
        if (readme) readmeShots.push({ name, file });
        return file;
      },
    };
    for (const step of steps) {
      const started = Date.now();
      const shotsBefore = readmeShots.length;
      try {
        await step.run(context);
        console.log(`e2e: ✔ ${step.name} (${Date.now() - started} ms)`);
      } catch (error) {
        failures++;
        readmeShots.length = shotsBefore; // a failed step's screenshots never reach the README
        console.log(`e2e: ✘ ${step.name} [${step.file}]\n      ${String(error?.message ?? error).split('\n').join('\n      ')}`);
        await context.screenshot(`failed-${step.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`).catch(() => {});
        await page.keyboard.press('Escape').catch(() => {});
      }
    }
    if (process.argv.includes('--readme-screenshots')) {
      const docs = path.join(repoRoot, 'docs/screenshots');
      mkdirSync(docs, { recursive: true });
      for (const { name, file } of readmeShots) copyFileSync(file, path.join(docs, `${name}.png`));
      console.log(`e2e: copied ${readmeShots.map((s) => s.name).join(', ')} to docs/screenshots/`);
    }
  } finally {
    await cleanup();
  }
  console.log(`e2e: ${steps.length - failures} passed, ${failures} failed; screenshots in ${path.relative(repoRoot, resultsDir)}/`);
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`\nE2E FAILED: ${error instanceof HostError ? error.message : (error?.stack ?? String(error))}`);
    process.exit(1);
  },
);
