// remember's `supersedes` and branches: two branches' memories never meet, so a memory of one
// branch that names another branch's memory is invalid_arguments, nothing is stored, and the
// named memory stays current on its branch (README: "Memories that stay true").

import * as assert from 'node:assert/strict';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { rememberTool } from '../../src/core/tools/write';
import { branchScopes, openTestEngine, removeDir, toolContext } from './mcpFixture';

describe("remember's supersedes across branches", function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  const fresh = branchScopes('github.com/acme/supersede-branches');

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine?.close();
    removeDir(dir);
  });

  async function statusOf(scope: Scope, id: number): Promise<string> {
    const [m] = await engine.getMemories([id], { project: scope.project }, { includeSuppressed: true });
    return m.status;
  }

  it("a caller on branch 'one' naming branch two's memory: invalid_arguments, nothing stored, branch two's memory stays active", async () => {
    const s = fresh();
    const two = await engine.remember({ title: 'Cache on two', text: 'On two we cache with Redis.', memory_type: 'decision' }, s.two);
    const before = (await engine.listMemories(s.all, { includeSuppressed: true })).length;
    const r = await rememberTool.run(toolContext(engine, s.one), { title: 'Cache on one', text: 'On one we cache in memory.', memory_type: 'decision', supersedes: [two.id] });
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, new RegExp(`^invalid_arguments: supersedes: memory ${two.id} is of branch 'two'`));
    assert.equal(await statusOf(s.all, two.id), 'active');
    assert.equal((await engine.listMemories(s.all, { includeSuppressed: true })).length, before, 'nothing stored');
  });

  it("the same through the memory's own branch field, from a caller without a branch", async () => {
    const s = fresh();
    const two = await engine.remember({ title: 'Queue on two', text: 'On two jobs run on SQS.', memory_type: 'decision' }, s.two);
    const r = await rememberTool.run(toolContext(engine, s.all), { title: 'Queue on one', text: 'On one jobs run on cron.', memory_type: 'decision', branch: 'one', supersedes: [two.id] });
    assert.equal(r.isError, true, r.text);
    assert.equal(await statusOf(s.all, two.id), 'active');
  });

  it('controls: within one branch, and a project-wide memory named project-wide, supersedes as before', async () => {
    const s = fresh();
    const older = await engine.remember({ title: 'Cache on one', text: 'On one we cache with Redis.', memory_type: 'decision' }, s.one);
    const newer = await rememberTool.run(toolContext(engine, s.one), { title: 'Cache on one', text: 'On one we cache in memory.', memory_type: 'decision', supersedes: [older.id] });
    assert.equal(newer.isError, false, newer.text);
    assert.equal(await statusOf(s.all, older.id), 'superseded');
    const wide = await engine.remember({ title: 'Logs', text: 'Logs go to stdout.', memory_type: 'decision' }, s.all);
    const wider = await rememberTool.run(toolContext(engine, s.all), { title: 'Logs', text: 'Logs go to a file.', memory_type: 'decision', supersedes: [wide.id] });
    assert.equal(wider.isError, false, wider.text);
    assert.equal(await statusOf(s.all, wide.id), 'superseded');
  });
});
