import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { FilterError, scopeWhere, sqlString } from '../../src/core/store/filters';

process.env.LANCEDB_LOG ??= 'error';

const HOSTILE = [
  "' OR 1=1 --",
  "x' OR '1'='1",
  "acme') OR (project = 'victim",
  "'; DROP TABLE cells; --",
  'acme\\',
  "%",
  '_',
];

describe('store: filters', () => {
  it('quotes strings and validates enums and numbers', () => {
    assert.equal(sqlString("it's"), "'it''s'");
    assert.throws(() => sqlString('a\u0000b'), FilterError);
    assert.throws(() => scopeWhere({ project: '' }), FilterError);
    assert.throws(() => scopeWhere({ project: 'p' }, { type: "edit' OR 1=1 --" }), FilterError);
    assert.throws(() => scopeWhere({ project: 'p' }, { layer: "L0' OR '1'='1" as never }), FilterError);
    assert.throws(() => scopeWhere({ project: 'p' }, { since_epoch: Number.NaN }), FilterError);
    assert.throws(() => scopeWhere({ project: 'p' }, { since_epoch: '1 OR 1=1' as never }), FilterError);
    assert.throws(() => scopeWhere({ project: 'p' }, { commit_sha: "abc' OR 1=1" }), FilterError);
    assert.equal(scopeWhere({ project: 'p' }, undefined, ['L1']), "project = 'p' AND status = 'active' AND layer IN ('L1')");
  });

  describe('hostile values against a real store', () => {
    let dir: string;
    let engine: MemoryEngine;
    const victim = { project: 'victim/repo', branch: 'main' };
    const attacker = { project: 'attacker/repo' };

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-filters-'));
      engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
      await engine.observe(
        [
          { type: 'note', title: 'secret roadmap of the victim', files_modified: ['src/a_b.ts'] },
          { type: 'edit', title: 'victim edit of the roadmap', files_modified: ['src/x.ts'], commit_sha: 'abcdef1234' },
        ],
        victim,
      );
      await engine.remember({ title: 'victim roadmap memory', text: 'the roadmap' }, victim);
      await engine.observe([{ type: 'note', title: 'harmless roadmap of the attacker' }], attacker);
    });
    after(async () => {
      await engine.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('a hostile project, branch, session, file or query never reaches another project', async () => {
      for (const value of HOSTILE) {
        const asProject = await engine.search('roadmap', { scope: { project: value } });
        assert.deepEqual(asProject, [], `project ${value}`);
        for (const filter of [{ branch: value }, { session_id: value }, { files: [value] }]) {
          const hits = await engine.search('roadmap', { scope: attacker, filter });
          assert.ok(hits.every((h) => h.cell.project === attacker.project), `filter ${JSON.stringify(filter)}`);
        }
        const asBranch = await engine.search('roadmap', { scope: { project: attacker.project, branch: value } });
        assert.ok(asBranch.every((h) => h.cell.project === attacker.project));
        const asQuery = await engine.search(value, { scope: attacker });
        assert.ok(asQuery.every((h) => h.cell.project === attacker.project));
        assert.deepEqual(await engine.listObservations({ project: value }), []);
        assert.deepEqual(await engine.listMemories({ project: value }), []);
        assert.deepEqual((await engine.entities({ project: value }, [value, 'file:src/x.ts'])).entities, []);
        assert.deepEqual(await engine.recentPrompts(attacker, value, 5), []);
      }
      // Ids are integers or nothing.
      await assert.rejects(engine.getObservations(['1 OR 1=1' as never], attacker), FilterError);
      const ownIds = (await engine.listObservations(victim)).map((o) => o.id);
      assert.deepEqual(await engine.getObservations(ownIds, attacker), []);
      assert.equal((await engine.getObservations(ownIds, victim)).length, 2);
    });

    it('matches file filters literally (LIKE wildcards are escaped)', async () => {
      const hits = await engine.search('roadmap', { scope: victim, filter: { files: ['src/a_b.ts'] } });
      assert.equal(hits.length, 1);
      assert.deepEqual(await engine.search('roadmap', { scope: victim, filter: { files: ['src/a%'] } }), []);
      assert.deepEqual(await engine.search('roadmap', { scope: victim, filter: { files: ['src/a'] } }), []);
      const bySha = await engine.search('roadmap', { scope: victim, filter: { commit_sha: 'ABCDEF1' } });
      assert.equal(bySha.length, 1);
    });
  });
});
