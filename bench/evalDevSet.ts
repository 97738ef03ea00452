// The public development sets in one command: gets the repository's history (a clone kept in
// the temp folder, or --repo with any clone or mirror), then runs the evaluation at the pinned
// HEAD and prints the table (--ablation: the per-lever table of bench/evalAblation.ts instead).
//   npx tsx bench/evalDevSet.ts [--set yargs|flask|express] [--repo <clone>] [--ablation] [--json] [--embedder use-lite|hashed|none]
// Both sets side by side, per lever: bench/evalLoop.ts. The repositories' code is only read
// from those clones; nothing of it is copied into the project.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { formatReport } from '../src/core/eval/format';
import { runEval } from '../src/core/eval/runEval';

import { DEV_SETS } from './devSets';
import type { SetName } from './devSets';
import { runBench } from './synthetic';

function hasCommit(repo: string, sha: string): boolean {
  return spawnSync('git', ['-C', repo, 'cat-file', '-e', `${sha}^{commit}`]).status === 0;
}

function ensureRepo(set: SetName, given: string | undefined): string {
  const { url, head } = DEV_SETS[set];
  if (given) {
    if (!hasCommit(given, head)) throw new Error(`${given} does not contain ${head}: fetch ${url} there first.`);
    return given;
  }
  const repo = path.join(os.tmpdir(), `code-memory-${set}-eval`);
  if (!existsSync(repo)) {
    process.stderr.write(`cloning ${url} into ${repo}\n`);
    execFileSync('git', ['clone', '--quiet', '--no-checkout', url, repo], { stdio: 'inherit' });
  }
  if (!hasCommit(repo, head)) execFileSync('git', ['-C', repo, 'fetch', '--quiet', 'origin'], { stdio: 'inherit' });
  return repo;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', default: 'yargs' },
      repo: { type: 'string' },
      ablation: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      embedder: { type: 'string', default: 'use-lite' },
    },
  });
  if (!(values.set! in DEV_SETS)) throw new Error(`--set: ${Object.keys(DEV_SETS).join(' or ')}`);
  const set = values.set as SetName;
  const { head: HEAD, queries: QUERIES } = DEV_SETS[set];
  const repo = ensureRepo(set, values.repo);
  if (values.ablation) {
    const args = ['tsx', path.join(__dirname, 'evalAblation.ts'), '--repo', repo, '--rev', HEAD, '--queries', QUERIES, '--embedder', values.embedder!];
    if (values.json) args.push('--json');
    return spawnSync('npx', args, { stdio: 'inherit' }).status ?? 1;
  }
  const report = await runEval({
    repo,
    rev: HEAD,
    queries: QUERIES,
    embedder: values.embedder as 'use-lite' | 'hashed' | 'none',
    log: (m) => process.stderr.write(`${m}\n`),
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  return 0;
}

runBench(main);
