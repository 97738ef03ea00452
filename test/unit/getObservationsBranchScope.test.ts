// get_observations on a server scoped to a branch (`code-memory mcp --branch one`): a record of
// another branch is outside the scope, so it is not_found, as GET /v1/nodes answers 404 for its
// node and recall leaves it out; records of no branch and of main hold on every branch.

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { getObservationsTool } from '../../src/core/tools/getObservations';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

describe("get_observations on a branch's scope", function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const all: Scope = { project: 'github.com/acme/branch-scope' };
  const one: Scope = { ...all, branch: 'one' };
  const ids = { observation: [] as number[], memory: [] as number[], session_summary: [] as number[] };

  before(async () => {
    ({ engine, dir } = await openTestEngine());
    // [branch two, branch one, main, no branch] of each kind.
    const branches = ['two', 'one', 'main', undefined];
    for (const branch of branches) {
      const session = `session-${branch ?? 'none'}`;
      const [o] = await engine.observe([{ type: 'note', title: `Wibblefrotz on ${branch ?? 'no branch'}`, narrative: 'wibblefrotz notes', branch, memory_session_id: session }], all);
      ids.observation.push(o.id);
      const m = await engine.remember({ title: `Wibblefrotz decision on ${branch ?? 'no branch'}`, text: 'We use wibblefrotz.', memory_type: 'decision', branch }, all);
      ids.memory.push(m.id);
      const s = await engine.endSession(all, session, 'idle');
      assert.ok(s, `a summary of ${session}`);
      ids.session_summary.push(s.id);
    }
    await engine.flush();
  });

  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  for (const source of ['observation', 'memory', 'session_summary'] as const) {
    it(`source '${source}': another branch's record is not_found, as its node is; the branch's own, main's and no branch's are returned`, async () => {
      const [two, ...held] = ids[source];
      const refused = await getObservationsTool.run(toolContext(engine, one), { ids: [two], source });
      assert.equal(refused.isError, true, refused.text);
      assert.match(refused.text, /^not_found: /);
      const served = await getObservationsTool.run(toolContext(engine, one), { ids: held, source });
      assert.equal(served.isError, false, served.text);
      assert.deepEqual((served.structured as { details: Array<{ id: number }> }).details.map((d) => d.id), held);
      // Without a branch every record of the project is in scope.
      const whole = await getObservationsTool.run(toolContext(engine, all), { ids: ids[source], source });
      assert.equal(whole.isError, false, whole.text);
    });
  }

  it("the engine's reads by id follow the same scope as getNode", async () => {
    const [two] = ids.observation;
    const [cell] = await engine.store.rows('cells', `project = '${all.project}' AND source_kind = 'observation' AND source_id = ${two}`);
    assert.equal(await engine.getNode(String(cell.node_id), one), null);
    assert.deepEqual(await engine.getObservations([two], one), []);
    assert.equal((await engine.getObservations([two], all)).length, 1);
  });
});
