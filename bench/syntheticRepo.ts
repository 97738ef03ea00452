// A git repository of synthetic commits for the benches that import history: `count` commits on
// `main`, each changing one of 50 files with a few lines of the synthetic corpus' words, written
// in one `git fast-import` (thousands of commits a second). A different `seed` gives other
// contents, hence other SHAs, so that an import into a store that imported an earlier repository
// adds every commit again.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syntheticCorpus } from './synthetic';

export function syntheticRepo(count: number, seed: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'code-memory-bench-repo-'));
  const git = (args: string[], input?: string): void => {
    const r = spawnSync('git', args, { cwd: dir, input, encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr}`);
  };
  git(['init', '-q', '-b', 'main']);
  const corpus = syntheticCorpus(count, 1, seed);
  const start = Math.floor(Date.now() / 1000) - count * 3600;
  const parts: string[] = [];
  const data = (text: string): string => `data ${Buffer.byteLength(text)}\n${text}\n`;
  for (let j = 0; j < count; j++) {
    const when = `${start + j * 3600} +0000`;
    const words = corpus.texts[j].split(' ');
    const lines = Array.from({ length: Math.ceil(words.length / 8) }, (_, k) => `// ${words.slice(k * 8, k * 8 + 8).join(' ')}`);
    const file = `export const step${j} = ${j};\n${lines.join('\n')}\n`;
    parts.push(
      `commit refs/heads/main\nauthor Bench Dev <dev@example.com> ${when}\ncommitter Bench Dev <dev@example.com> ${when}\n` +
        data(`${corpus.titles[j]}\n\n${corpus.texts[j]}`) +
        `M 100644 inline src/module${j % 50}.ts\n` +
        data(file),
    );
  }
  git(['fast-import', '--quiet'], parts.join(''));
  return dir;
}
