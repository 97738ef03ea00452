#!/usr/bin/env node
// Benchmarks that run inside a real VS Code (code-server + headless Chromium, like the host
// tests): runs the named suite of test/host and prints its JSON report and a table. Heavy: run
// them alone on the machine.
//   node bench/hostBench.mjs capture [--no-build]       capture cost and activation (test/host/captureBench.test.ts);
//       options through the environment: CODE_MEMORY_BENCH_KEYSTROKES (2000),
//       CODE_MEMORY_BENCH_FILES (200), CODE_MEMORY_BENCH_SWITCHES (100)
//   node bench/hostBench.mjs store-open --store DIR [--embedder hashed]
//       the extension's store open and first answers on a store bench/scale.ts kept
//       (test/host/storeOpenBench.test.ts); the store is written to (upkeep, embeddings of the
//       configured model): give it a copy, and the embedder the store was filled with
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCHES = {
  capture: { grep: 'capture-bench', marker: 'CAPTURE_BENCH_JSON ', title: 'capture on the extension host' },
  'store-open': { grep: 'store-open-bench', marker: 'STORE_OPEN_BENCH_JSON ', title: 'store open on the extension host' },
};

const { values, positionals } = parseArgs({ allowPositionals: true, options: { store: { type: 'string' }, embedder: { type: 'string' }, 'no-build': { type: 'boolean' } } });
const bench = BENCHES[positionals[0]];
if (!bench) {
  console.error(`usage: node bench/hostBench.mjs ${Object.keys(BENCHES).join('|')} [--store DIR]`);
  process.exit(2);
}
if (positionals[0] === 'store-open' && !values.store) {
  console.error('store-open needs --store DIR: a copy of a store bench/scale.ts --store kept');
  process.exit(2);
}

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const env = { ...process.env, CODE_MEMORY_HOST_GREP: bench.grep };
if (values.store) env.CODE_MEMORY_HOST_STORE = path.resolve(values.store);
// The store's own model, so that opening it does not start embedding it again.
if (values.embedder) env.CODE_MEMORY_HOST_SETTINGS = JSON.stringify({ 'codeMemory.embedding.provider': values.embedder });
const child = spawn(process.execPath, [path.join(root, 'test/host/runCodeServer.mjs'), ...(values['no-build'] ? ['--no-build'] : [])], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
child.stdout.on('data', (d) => {
  out += d;
  process.stdout.write(d);
});
child.on('exit', (code) => {
  const line = out.split('\n').find((l) => l.includes(bench.marker));
  if (!line) {
    console.error(`${positionals[0]} bench: no report from the extension host`);
    process.exit(code || 1);
  }
  const report = JSON.parse(line.slice(line.indexOf(bench.marker) + bench.marker.length));
  console.log(`\n${bench.title}`);
  for (const [k, v] of Object.entries(report)) console.log(`  ${k.padEnd(38)} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  process.exit(code ?? 0);
});
