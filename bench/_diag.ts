import { readFileSync } from 'node:fs';
import { MemoryEngine } from '../src/core/engine';
(async () => {
  const [store, queries] = process.argv.slice(2);
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none' });
  const scope = { project: 'eval' };
  const out: string[] = [];
  for (const line of readFileSync(queries, 'utf8').split('\n').filter(Boolean)) {
    const q = JSON.parse(line);
    const hits = await engine.search(q.question, { scope, limit: 300, layers: ['L0'] });
    const shas = hits.map((h) => h.cell.commit_sha ?? '');
    const r = shas.findIndex((s) => q.gold_commits.includes(s));
    out.push(`${q.id} ${q.kind.slice(0, 4)} rank ${r < 0 ? '-' : r + 1}`);
  }
  console.log(out.join('\n'));
  await engine.close();
})();
