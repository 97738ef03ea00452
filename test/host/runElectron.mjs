// Runs the same host suites (out/host/**/*.test.js) in desktop VS Code through @vscode/test-electron.
// Needs network access to download VS Code into .vscode-test/ on first use, and a display (use
// `xvfb-run -a npm run test:host:electron` on a headless Linux machine). CI here uses
// runCodeServer.mjs instead, because desktop VS Code cannot be downloaded.
//   node test/host/runElectron.mjs [--no-build]    env: CODE_MEMORY_VSCODE_VERSION (default: stable)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { repoRoot } from './hostLauncher.mjs';

async function main() {
  if (!process.argv.includes('--no-build')) {
    const build = spawnSync(process.execPath, ['esbuild.config.mjs'], { cwd: repoRoot, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('the build failed');
  }
  const base = mkdtempSync(path.join(os.tmpdir(), 'code-memory-electron-'));
  const workspace = path.join(base, 'workspace');
  execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
  writeFileSync(path.join(workspace, 'README.md'), '# Host test workspace\n');
  writeFileSync(path.join(workspace, 'index.js'), 'export function add(a, b) {\n  return a + b;\n}\n');
  execFileSync('git', ['-C', workspace, '-c', 'user.name=Host Test', '-c', 'user.email=host@test.invalid', 'add', '.']);
  execFileSync('git', ['-C', workspace, '-c', 'user.name=Host Test', '-c', 'user.email=host@test.invalid', 'commit', '-q', '-m', 'Initial commit']);
  try {
    await runTests({
      version: process.env.CODE_MEMORY_VSCODE_VERSION ?? 'stable',
      extensionDevelopmentPath: repoRoot,
      extensionTestsPath: path.join(repoRoot, 'out/host/index.js'),
      launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust', '--user-data-dir', path.join(base, 'user-data')],
      extensionTestsEnv: { CODE_MEMORY_STORE: path.join(base, 'store'), LANCEDB_LOG: 'error' },
    });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`\nHOST TESTS (desktop VS Code) FAILED: ${error?.message ?? error}`);
  process.exit(1);
});
