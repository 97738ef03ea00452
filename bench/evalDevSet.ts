// The public development set in one command: gets yargs/yargs' history (a clone kept in the
// temp folder, or --repo with any clone or mirror), then runs the evaluation at the pinned HEAD
// and prints the table (--ablation: the per-lever table of bench/evalAblation.ts instead).
//   npx tsx bench/evalDevSet.ts [--repo <yargs clone>] [--ablation] [--json] [--embedder use-lite|hashed|none]
// The repository's code is only read from that clone; nothing of it is copied into the project.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { formatReport } from '../src/core/eval/format';
import { runEval } from '../src/core/eval/runEval';

const URL = 'https://github.com/yargs/yargs.git';
const HEAD = '2a4378bdc2eac9cf7d0cdfe0a52b1b25f779806a';
const QUERIES = path.join(__dirname, 'eval', 'dev-queries.jsonl');

function hasCommit(repo: string, sha: string): boolean {
  return spawnSync('git', ['-C', repo, 'cat-file', '-e', `${sha}^{commit}`]).status === 0;
}

function ensureRepo(given: string | undefined): string {
  if (given) {
    if (!hasCommit(given, HEAD)) throw new Error(`${given} does not contain ${HEAD}: fetch yargs/yargs there first.`);
    return given;
  }
  const repo = path.join(os.tmpdir(), 'code-memory-yargs-eval');
  if (!existsSync(repo)) {
    process.stderr.write(`cloning ${URL} into ${repo}\n`);
    execFileSync('git', ['clone', '--quiet', '--no-checkout', URL, repo], { stdio: 'inherit' });
  }
  if (!hasCommit(repo, HEAD)) execFileSync('git', ['-C', repo, 'fetch', '--quiet', 'origin'], { stdio: 'inherit' });
  return repo;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      repo: { type: 'string' },
      ablation: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      embedder: { type: 'string', default: 'use-lite' },
    },
  });
  const repo = ensureRepo(values.repo);
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

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`eval failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
