import { MemoryEngine } from '../src/core/engine';
import { TABLES } from '../src/core/store/schema';
(async () => {
  const [store, sha] = process.argv.slice(2);
  const engine = await MemoryEngine.open({ storeUri: store, embedder: 'none' });
  const rows = await engine.store.table(TABLES.cells).query().where(`commit_sha = '${sha}'`).select(['title', 'text', 'search_text', 'type']).toArray();
  console.log(JSON.stringify(rows, null, 1).slice(0, 3000));
  await engine.close();
})();
