// Hostile project names (SQL quotes, LIKE wildcards, prototype keys, prefixes of
// another project's name) never see another project's data.
import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import { everything, httpSide, rest } from './crossProjectFixture';
import { openTestEngine, removeDir } from './mcpFixture';

const ALPHA = 'github.com/acme/alpha';
const alphaScope: Scope = { project: ALPHA };
const WORDS = ['zorblaxquint', 'flimwobble', 'snarfidex'];

describe('isolation: hostile project names', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let ids: number[] = [];
  let memoryId = 0;

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    ids = (await engine.observe([{ type: 'note', title: 'Zorblaxquint flimwobble', narrative: 'snarfidex everywhere', memory_session_id: 's1' }], alphaScope)).map((o) => o.id);
    memoryId = (await engine.remember({ title: 'Zorblaxquint decision', text: 'We use flimwobble.', memory_type: 'decision' }, alphaScope)).id;
    await engine.flush();
  });
  after(async () => {
    await engine?.close();
    if (dir) removeDir(dir);
  });

  for (const name of [`x' OR '1'='1`, `x' OR project = '${ALPHA}' OR 'a'='b`, '%', '_', 'github.com/acme/%', 'github.com/acme/alph_', 'github.com/acme', 'github.com/acme/alpha ', 'GITHUB.COM/ACME/ALPHA', '__proto__', 'constructor', 'x\\', `${ALPHA}\\`]) {
    it(`a server for project ${JSON.stringify(name)} sees nothing of alpha`, async () => {
      const server = await startHttpServer({ engine, scope: { project: name } });
      const side = await httpSide(name, server);
      try {
        const found: string[] = [];
        const check = (label: string, text: string) => {
          const lower = text.toLowerCase();
          const hit = WORDS.filter((w) => lower.includes(w));
          if (hit.length) found.push(`${label}: ${hit.join(',')}`);
        };
        for (const [tool, args] of [
          ['retrieve_memory', { prompt: 'zorblaxquint flimwobble snarfidex', session_id: 's1' }],
          ['recall_context', { query: 'zorblaxquint flimwobble snarfidex' }],
          ['recall', { text: 'zorblaxquint flimwobble' }],
          ['get_observations', { ids, source: 'observation' }],
          ['get_observations', { ids: [memoryId] }],
        ] as const) {
          const r = await side.call(tool, args as Record<string, unknown>);
          let text = everything(r);
          for (const v of Object.values(args)) if (typeof v === 'string') text = text.split(v).join('');
          check(tool, text);
          if (tool === 'recall') assert.deepEqual((r.structuredContent as { nodes: unknown[] }).nodes, [], `recall for ${name}`);
          if (tool === 'get_observations') assert.equal(r.isError, true, `get_observations for ${name}: ${r.content[0].text}`);
        }
        const health = await rest(server, '/v1/health');
        const stats = (JSON.parse(health.body) as { stats: { observations: number; memories: number } }).stats;
        assert.deepEqual([stats.observations, stats.memories], [0, 0], `health for ${name}: ${health.body}`);
        const log = await rest(server, '/v1/dev/mcp-requests?limit=1000');
        const own = (JSON.parse(log.body) as { requests: Array<{ project?: string }> }).requests;
        assert.ok(own.every((r) => r.project === undefined || r.project === name), log.body.slice(0, 300));
        assert.deepEqual(found, []);
      } finally {
        await side.client.close();
        await server.close();
      }
    });
  }
});
