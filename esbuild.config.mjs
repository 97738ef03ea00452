// Builds the extension, CLI and embedding-worker bundles into dist/, and the host test
// suites into out/host/. Usage: node esbuild.config.mjs [--watch] [--production]
import * as esbuild from 'esbuild';
import { readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliBundles } from './scripts/cliBundles.mjs';

const root = path.dirname(fileURLToPath(import.meta.url));
const args = new Set(process.argv.slice(2));
const watch = args.has('--watch');
const production = args.has('--production');

// Native code, wasm and model files are loaded from node_modules at run time. apache-arrow must
// be the very copy LanceDB loads: a second, bundled copy fails LanceDB's schema instanceof checks
// ("Table and inner RecordBatch schemas must be equivalent"). gpt-tokenizer is 3 MB of rank
// tables: bundled, every start of the engine thread parsed them (about 100 ms of its store open)
// before anything counted a token; from node_modules they load at the first count. tsx is only
// resolved when running from TypeScript sources (tests), never from the bundles.
const external = ['vscode', '@lancedb/lancedb', 'apache-arrow', '@energetic-ai/*', 'tsx', 'tsx/*', 'gpt-tokenizer'];

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  absWorkingDir: root,
};

const bundles = [
  { entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js' },
  // The extension's engine thread (engine, LanceDB, tools, MCP server), started on first need.
  { entryPoints: ['src/extension/engineWorker/worker.ts'], outfile: 'dist/engineWorker.js' },
  // The CLI (dist/cli.js and the commands bundle it loads lazily) and the embedding worker.
  ...cliBundles(root, path.join(root, 'dist')),
];

async function listHostTests(dir) {
  if (!existsSync(dir)) return [];
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.test.ts')) {
      found.push(path.relative(root, path.join(entry.parentPath ?? entry.path, entry.name)));
    }
  }
  return found.sort();
}

// A deleted suite must not keep running from an old out/host file. Only stale files are removed
// (never the whole folder), so a concurrent host run never sees the suites missing.
async function removeStaleHostSuites(entries) {
  const outDir = path.join(root, 'out/host');
  if (!existsSync(outDir)) return;
  const expected = new Set(entries.map((e) => path.join(outDir, path.relative('test/host', e)).replace(/\.ts$/, '.js')));
  for (const entry of await readdir(outDir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile() && file.endsWith('.js') && !expected.has(file)) await rm(file, { force: true });
  }
}

async function contexts() {
  const list = [];
  for (const bundle of bundles) {
    // Other parts of the product land over time; a missing entry point is not a build error.
    const entry = bundle.entryPoints[0];
    if (!existsSync(path.resolve(root, entry))) {
      console.log(`esbuild: skipping ${path.relative(root, path.resolve(root, entry))} (not present yet)`);
      continue;
    }
    list.push(await esbuild.context({ ...common, ...bundle }));
  }

  // Host suites: one file per suite so mocha inside the host can glob them; never minified.
  const hostEntries = await listHostTests(path.join(root, 'test/host'));
  if (existsSync(path.join(root, 'test/host/index.ts'))) hostEntries.push('test/host/index.ts');
  if (hostEntries.length > 0) {
    await removeStaleHostSuites(hostEntries);
    list.push(
      await esbuild.context({
        ...common,
        entryPoints: hostEntries,
        outdir: 'out/host',
        outbase: 'test/host',
        // mocha is resolved from node_modules so the suites and the runner share one instance.
        external: [...external, 'mocha'],
        sourcemap: 'inline',
        minify: false,
      }),
    );
  }
  return list;
}

const ctxs = await contexts();
if (watch) {
  await Promise.all(ctxs.map((ctx) => ctx.watch()));
  console.log('esbuild: watching for changes (Ctrl-C to stop)');
} else {
  try {
    await Promise.all(ctxs.map((ctx) => ctx.rebuild()));
  } finally {
    await Promise.all(ctxs.map((ctx) => ctx.dispose()));
  }
  console.log(`esbuild: built ${ctxs.length} target(s)${production ? ' (production)' : ''}`);
}
