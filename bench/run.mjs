#!/usr/bin/env node
// npm run bench: runs the benchmarks one after another through tsx and writes their JSON
// reports together. Heavy (the 100k search bench builds two ANN indexes): on a shared
// machine run it alone. Options: --quick (small sizes), --only embed,ingest,search,
// --out <file> (default: print only).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
  },
});

const benches = {
  embed: values.quick ? ['--short', '64', '--long', '8'] : [],
  ingest: values.quick ? ['--count', '500'] : ['--count', '5000'],
  search: values.quick
    ? ['--sizes', '1000,5000', '--ann', '5000', '--kinds', 'hnsw_sq', '--queries', '20']
    : ['--sizes', '1000,10000,25000,50000,100000', '--ann', '10000,100000', '--kinds', 'hnsw_sq'],
};
const selected = values.only ? values.only.split(',') : Object.keys(benches);
const tsx = path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const reports = {};
let failed = false;
for (const name of selected) {
  if (!benches[name]) {
    console.error(`unknown bench ${name}; choose from ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n=== bench/${name}.ts ${benches[name].join(' ')}`);
  const res = spawnSync(process.execPath, [tsx, path.join(root, 'bench', `${name}.ts`), ...benches[name]], {
    cwd: root,
    env: { ...process.env, LANCEDB_LOG: process.env.LANCEDB_LOG ?? 'error' },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const out = res.stdout ?? '';
  process.stdout.write(out.split('\n').filter((l) => !l.startsWith('{')).join('\n'));
  const json = out.split('\n').reverse().find((l) => l.startsWith('{'));
  if (res.status !== 0 || !json) {
    failed = true;
    console.error(`bench/${name}.ts failed (exit ${res.status})`);
    continue;
  }
  reports[name] = JSON.parse(json);
}
const all = JSON.stringify({ date: new Date().toISOString(), reports }, null, 2);
if (values.out) writeFileSync(values.out, all + '\n');
else console.log('\n' + all);
process.exit(failed ? 1 : 0);
