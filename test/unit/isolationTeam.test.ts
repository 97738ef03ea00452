// A team item shared in one project never reaches another project's caller,
// through any tool, REST route or node id, and cannot be unshared from another project's scope.
import { strict as assert } from 'node:assert';
import type { MemoryEngine } from '../../src/core/engine';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { S3Server } from './fixtures/s3Server';
import { everything, httpSide, rest } from './crossProjectFixture';
import { teamHarness } from './teamFixture';

process.env.LANCEDB_LOG ??= 'error';

const PROJECT = 'github.com/acme/shared';
const OTHER = 'github.com/acme/other';

describe('isolation: team items stay in their project', function () {
  this.timeout(300_000);
  const team = teamHarness();
  const person = (name: string, s: S3Server): Promise<MemoryEngine> => team.person(name, s);

  it("another project's caller (same person, same team store) gets nothing of a shared item, by search, tools, REST node id, or unshare", async () => {
    const s = await team.server();
    const alice = await person('Alice', s);
    const bob = await person('Bob', s);
    const scope = { project: PROJECT };
    const other = { project: OTHER };
    const m = await alice.remember({ title: 'Zorblaxquint retry policy', text: 'Zorblaxquint retries with flimwobble backoff.', memory_type: 'decision' }, scope);
    const shared = await alice.share('memory', m.id, scope);
    assert.equal(shared.delivery, 'sent');
    const nodeId = shared.preview.node_id;
    await bob.remember({ title: 'Other project note', text: 'vantrelliq only' }, other);
    await bob.syncTeam();
    // control: bob in PROJECT sees it
    assert.ok((await bob.search('zorblaxquint flimwobble', { scope, limit: 5 })).some((h) => h.origin?.store === 'team'), 'control: bob sees the item in its project');

    const problems: string[] = [];
    for (const engine of [bob, alice]) {
      const who = engine === bob ? 'bob' : 'alice';
      if ((await engine.getNode(nodeId, other)) !== null) problems.push(`${who}.getNode under OTHER`);
      if ((await engine.listShared(other)).length !== 0) problems.push(`${who}.listShared under OTHER`);
      const server = await startHttpServer({ engine, scope: other });
      const side = await httpSide(OTHER, server);
      try {
        const node = await rest(server, `/v1/nodes/${nodeId}`);
        if (node.status !== 404 || /zorblaxquint|flimwobble/i.test(node.body)) problems.push(`${who} REST node -> ${node.status} ${node.body.slice(0, 200)}`);
        for (const [tool, args] of [
          ['retrieve_memory', { prompt: 'retry policy backoff' }],
          ['recall_context', { query: 'retry policy backoff' }],
          ['get_observations', { ids: [m.id] }],
        ] as const) {
          const r = await side.call(tool, args as Record<string, unknown>);
          if (/zorblaxquint|flimwobble/i.test(everything(r)) || everything(r).includes(nodeId)) problems.push(`${who} ${tool} leaks: ${everything(r).slice(0, 300)}`);
        }
      } finally {
        await side.client.close();
        await server.close();
      }
    }
    // Unsharing by node id from another project's scope must not take the item away from PROJECT.
    const un = await alice.unshare({ node_id: nodeId }, other).catch((e: Error) => ({ error: e.message }));
    await bob.syncTeam();
    const still = (await bob.search('zorblaxquint flimwobble', { scope, limit: 5 })).some((h) => h.origin?.store === 'team');
    if (!still) problems.push(`alice.unshare({node_id}, OTHER) removed PROJECT's item: ${JSON.stringify(un)}`);
    assert.deepEqual(problems, []);
  });
});
