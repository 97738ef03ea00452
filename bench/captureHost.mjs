#!/usr/bin/env node
// Capture cost on the extension host and activation time, measured inside a real VS Code
// (code-server + headless Chromium, like the host tests): runs test/host/captureBench.test.ts
// and prints its JSON report and a table. Heavy: run it alone on the
// machine. Options through the environment: CODE_MEMORY_BENCH_KEYSTROKES (2000),
// CODE_MEMORY_BENCH_FILES (200), CODE_MEMORY_BENCH_SWITCHES (100).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const child = spawn(process.execPath, [path.join(root, 'test/host/runCodeServer.mjs'), ...process.argv.slice(2)], {
  cwd: root,
  env: { ...process.env, CODE_MEMORY_HOST_GREP: 'capture-bench' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (d) => {
  out += d;
  process.stdout.write(d);
});
child.on('exit', (code) => {
  const line = out.split('\n').find((l) => l.includes('CAPTURE_BENCH_JSON '));
  if (!line) {
    console.error('capture bench: no report from the extension host');
    process.exit(code || 1);
  }
  const report = JSON.parse(line.slice(line.indexOf('CAPTURE_BENCH_JSON ') + 'CAPTURE_BENCH_JSON '.length));
  console.log('\ncapture on the extension host');
  for (const [k, v] of Object.entries(report)) console.log(`  ${k.padEnd(38)} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  process.exit(code ?? 0);
});
