// Memories that stay true across branches, and requirements that are not exclusive: a memory
// recorded on a branch replaces a project-wide one for callers on that branch only (the
// project-wide one stays current everywhere else, until the fact is recorded project-wide);
// "X must be A" and "X must be B" contradict only when A and B are values of one property
// ("30 s" and "10 s"; opposites such as "public" and "private", "stateful" and "stateless").

import * as assert from 'node:assert/strict';
import { extractFacts, exclusiveObjects, objectRelation } from '../../src/core/compress/facts';
import type { MemoryEngine } from '../../src/core/engine';
import type { Memory, Scope } from '../../src/core/model/records';
import { recall } from '../../src/core/tools/recall';
import { recallContext } from '../../src/core/tools/recallContext';
import { retrieveMemory } from '../../src/core/tools/retrieveMemory';
import { openTestEngine, removeDir, toolContext } from './mcpFixture';

async function memory(engine: MemoryEngine, scope: Scope, id: number): Promise<Memory> {
  const [m] = await engine.getMemories([id], { project: scope.project }, { includeSuppressed: true });
  assert.ok(m, `memory ${id}`);
  return m;
}

const openConflicts = (m: Memory): number[] => (m.conflicts ?? []).filter((c) => c.resolution === 'open').map((c) => c.id);

/** Memory ids a recall_context pack presents as current (not marked HISTORY), and its text. */
async function currentInPack(engine: MemoryEngine, scope: Scope, query: string): Promise<{ ids: number[]; text: string }> {
  const out = await recallContext(toolContext(engine, scope), { query });
  const ids = out.items.filter((i) => i.source_kind === 'memory').map((i) => i.source_id);
  return { ids: ids.filter((id) => !new RegExp(`\\(memory ${id}, [^)]*\\) \\[HISTORY`).test(out.text)), text: out.text };
}

describe('memories that stay true across branches (real engine)', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let dir: string;
  let n = 0;
  /** A fresh project, and the scopes of a caller with no branch, on main and on try-redis. */
  const fresh = (): { all: Scope; main: Scope; redis: Scope } => {
    const project = `github.com/acme/branches-${++n}`;
    return { all: { project }, main: { project, branch: 'main' }, redis: { project, branch: 'try-redis' } };
  };
  const cache = { memory_type: 'decision', title: 'Cache' };

  before(async () => {
    ({ engine, dir } = await openTestEngine());
  });
  after(async () => {
    await engine.close();
    removeDir(dir);
  });

  describe('1. a branch memory shadows a project-wide one on its branch only', () => {
    it('"we use Redis for the cache" on try-redis leaves main\'s Memcached current off that branch', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      const redis = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.redis);
      assert.equal(redis.branch, 'try-redis');
      const p = await memory(engine, s.all, memcached.id);
      assert.equal(p.status, 'active', `superseded by ${p.superseded_by}`);
      assert.equal(p.superseded_by, null);
      assert.equal(p.valid_to_epoch, null);
      assert.deepEqual((p.temporal_facts ?? []).map((f) => f.status), ['current']);
      // The branch memory says what it replaces there; neither is a question for a person.
      assert.deepEqual(redis.supersedes, [memcached.id]);
      assert.deepEqual(openConflicts(redis), []);
      assert.deepEqual(openConflicts(p), []);

      const onMain = await currentInPack(engine, s.main, 'which cache do we use');
      assert.ok(onMain.ids.includes(memcached.id) && !onMain.ids.includes(redis.id), onMain.text);
      const anywhere = await currentInPack(engine, s.all, 'which cache do we use');
      assert.ok(anywhere.ids.includes(memcached.id), anywhere.text);
      assert.match(anywhere.text, new RegExp(`\\(memory ${redis.id}, [^)]*\\) \\[CURRENT on branch try-redis since [\\d-]+; replaces memory ${memcached.id} on that branch\\]`));

      const onBranch = await currentInPack(engine, s.redis, 'which cache do we use');
      assert.ok(onBranch.ids.includes(redis.id) && !onBranch.ids.includes(memcached.id), onBranch.text);
      const rm = await retrieveMemory(toolContext(engine, s.redis), { prompt: 'which cache do we use' });
      const paths = rm.retrieval!.facts.map((f) => f.source_path);
      assert.ok(paths.includes(`memory/${redis.id}`) && !paths.includes(`memory/${memcached.id}`), rm.content_text);
      // Asked for history on the branch, the project-wide one comes after, saying why.
      const past = await recallContext(toolContext(engine, s.redis), { query: 'which cache did we use before' });
      assert.match(past.text, new RegExp(`\\(memory ${memcached.id}, [^)]*\\) \\[HISTORY on branch try-redis: replaced here by memory ${redis.id}; still current project-wide\\]`), past.text);
    });

    it('a project-wide decision made later does not retire the branch one: the branch still holds there', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      const redis = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.redis);
      const valkey = await engine.remember({ ...cache, text: 'We use Valkey for the cache' }, s.all);
      assert.equal((await memory(engine, s.all, memcached.id)).superseded_by, valkey.id, 'project-wide: the newer holds');
      const r = await memory(engine, s.all, redis.id);
      assert.equal(r.status, 'active');
      assert.deepEqual(r.supersedes, [memcached.id, valkey.id]);
      assert.equal(valkey.status, 'active');
      const onBranch = await currentInPack(engine, s.redis, 'which cache do we use');
      assert.deepEqual(onBranch.ids, [redis.id], onBranch.text);
      const onMain = await currentInPack(engine, s.main, 'which cache do we use');
      assert.deepEqual(onMain.ids, [valkey.id], onMain.text);
    });

    it('merged: the fact recorded project-wide supersedes the project-wide one then', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      const redis = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.redis);
      const merged = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.all);
      assert.deepEqual(merged.supersedes, [memcached.id]);
      assert.equal((await memory(engine, s.all, memcached.id)).status, 'superseded');
      assert.equal((await memory(engine, s.all, redis.id)).status, 'active', 'the branch one agrees: nothing to retire');
      const onMain = await currentInPack(engine, s.main, 'which cache do we use');
      assert.ok(onMain.ids.includes(merged.id) && !onMain.ids.includes(memcached.id), onMain.text);
    });

    it('by topic_key and by supersedes too: a branch memory naming a project-wide one leaves it current elsewhere', async () => {
      const s = fresh();
      const a = await engine.remember({ ...cache, text: 'Sessions are kept in Memcached', topic_key: 'session-store' }, s.all);
      const b = await engine.remember({ ...cache, text: 'Sessions are kept in Redis', topic_key: 'session-store' }, s.redis);
      const c = await engine.remember({ ...cache, title: 'Queue', text: 'Jobs run on a cron table' }, s.all);
      const d = await engine.remember({ ...cache, title: 'Queue', text: 'Jobs run on BullMQ workers', supersedes: [c.id] }, s.redis);
      for (const id of [a.id, c.id]) assert.equal((await memory(engine, s.all, id)).status, 'active', `memory ${id}`);
      assert.deepEqual(b.supersedes, [a.id]);
      assert.deepEqual(d.supersedes, [c.id]);
      // Named again project-wide, it is still current there to be superseded.
      const e = await engine.remember({ ...cache, title: 'Queue', text: 'Jobs run on SQS', supersedes: [c.id] }, s.all);
      assert.equal((await memory(engine, s.all, c.id)).superseded_by, e.id);
    });

    it('a memory recorded on the default branch is project-wide: it supersedes one with no branch, a branch one shadows it', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      const valkey = await engine.remember({ ...cache, text: 'We use Valkey for the cache' }, s.main);
      assert.equal(valkey.branch, 'main');
      assert.equal((await memory(engine, s.all, memcached.id)).superseded_by, valkey.id);
      const redis = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.redis);
      assert.equal((await memory(engine, s.all, valkey.id)).status, 'active');
      assert.deepEqual(redis.supersedes, [valkey.id]);
      const onMain = await currentInPack(engine, s.main, 'which cache do we use');
      assert.deepEqual(onMain.ids, [valkey.id], onMain.text);
      assert.match(onMain.text, new RegExp(`\\[CURRENT since [\\d-]+; replaces memory ${memcached.id}\\]`));
    });

    it('within one branch the newer supersedes the older; two branches never touch each other (controls)', async () => {
      const s = fresh();
      const one = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.redis);
      const two = await engine.remember({ ...cache, text: 'We use KeyDB for the cache' }, s.redis);
      assert.equal((await memory(engine, s.all, one.id)).superseded_by, two.id);
      const other = await engine.remember({ ...cache, text: 'We use Dragonfly for the cache' }, { project: s.all.project, branch: 'try-dragonfly' });
      assert.equal((await memory(engine, s.all, two.id)).status, 'active');
      assert.equal(other.supersedes, null);
    });
  });

  describe('1a. what a search on a branch reads', () => {
    it('recall_context on a branch reads only the branch memories that replace others, not every memory of the project', async () => {
      const s = fresh();
      await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      for (let i = 0; i < 60; i++) await engine.remember({ memory_type: 'note', title: `Note ${i}`, text: `Unrelated note number ${i} about module m${i}` }, s.all);
      let listed = 0;
      const counting = new Proxy(engine, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if (prop === 'listMemories') {
            return async (...args: unknown[]) => {
              const rows = await (v as (...a: unknown[]) => Promise<unknown[]>).apply(target, args);
              listed += rows.length;
              return rows;
            };
          }
          return typeof v === 'function' ? v.bind(target) : v;
        },
      }) as MemoryEngine;
      const out = await recallContext(toolContext(counting, s.redis), { query: 'which cache do we use', max_items: 3 });
      assert.ok(out.items.length > 0, 'control: found');
      assert.equal(listed, 0, `one search on a branch listed ${listed} memories`);
    });
  });

  describe('1b. decisions promoted from sessions on a branch', () => {
    /** One session in `scope` that notes `text`, ended. */
    const session = async (scope: Scope, text: string): Promise<void> => {
      const id = await engine.currentSessionId(scope);
      await engine.observe([{ type: 'note', title: 'cache', narrative: text }], scope);
      await engine.endSession(scope, id, 'request');
    };

    it('a decision recurring on try-redis is that branch\'s memory; said on main too, it is promoted project-wide then', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      await session(s.redis, 'We decided to use Redis for the cache.');
      await session(s.redis, 'We decided to use Redis for the cache.');
      const promoted = (await engine.listMemories(s.all)).filter((m) => m.id !== memcached.id);
      assert.deepEqual(promoted.map((m) => m.branch), ['try-redis'], JSON.stringify(promoted.map((m) => [m.id, m.branch, m.text])));
      assert.deepEqual(promoted[0].supersedes, [memcached.id]);
      assert.equal((await memory(engine, s.all, memcached.id)).status, 'active');

      await session(s.main, 'We decided to use Redis for the cache.');
      const merged = (await engine.listMemories(s.all)).filter((m) => m.id !== memcached.id && m.id !== promoted[0].id);
      assert.deepEqual(merged.map((m) => m.branch), [null], JSON.stringify(merged.map((m) => [m.id, m.branch, m.text])));
      assert.equal((await memory(engine, s.all, memcached.id)).superseded_by, merged[0].id);
    });
  });

  describe('2. a branch memory, then the branch or the memory deleted', () => {
    it('the branch memory forgotten: the project-wide one is current on that branch again, untouched', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      const redis = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.redis);
      await engine.forget({ kind: 'memory', ids: [redis.id] }, s.all);
      const p = await memory(engine, s.all, memcached.id);
      assert.equal(p.status, 'active');
      assert.deepEqual((p.temporal_facts ?? []).map((f) => f.status), ['current']);
      const onBranch = await currentInPack(engine, s.redis, 'which cache do we use');
      assert.deepEqual(onBranch.ids, [memcached.id], onBranch.text);
    });

    it('the git branch deleted (its memories kept): nothing was retired project-wide, so nothing is to restore', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      await engine.remember({ ...cache, text: 'We moved the cache to Redis' }, s.redis);
      // The branch's memory stays, for a caller on that branch (or one asking about every branch):
      // main's memory was never retired, so there is nothing to bring back.
      const onMain = await currentInPack(engine, s.main, 'which cache do we use');
      assert.deepEqual(onMain.ids, [memcached.id], onMain.text);
      const anywhere = await currentInPack(engine, s.all, 'which cache do we use');
      assert.ok(anywhere.ids.includes(memcached.id), anywhere.text);
    });

    it('superseded within a branch, the successor forgotten: the older one holds on the branch again', async () => {
      const s = fresh();
      const one = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.redis);
      const two = await engine.remember({ ...cache, text: 'We use KeyDB for the cache' }, s.redis);
      assert.equal((await memory(engine, s.all, one.id)).status, 'superseded', 'control');
      await engine.forget({ kind: 'memory', ids: [two.id] }, s.all);
      const back = await memory(engine, s.all, one.id);
      assert.equal(back.status, 'active');
      assert.equal(back.superseded_by, null);
      const onBranch = await currentInPack(engine, s.redis, 'which cache do we use');
      assert.deepEqual(onBranch.ids, [one.id], onBranch.text);
    });

    it('a project-wide successor forgotten while a branch memory shadows it: the older project-wide one is current again, not history of the branch memory', async () => {
      const s = fresh();
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      const valkeyBranch = { project: s.all.project, branch: 'try-valkey' };
      const redis = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, s.all);
      assert.equal((await memory(engine, s.all, memcached.id)).superseded_by, redis.id, 'control: Redis replaced Memcached project-wide');
      const valkey = await engine.remember({ ...cache, text: 'We use Valkey for the cache' }, valkeyBranch);
      assert.deepEqual(valkey.supersedes, [redis.id], 'control: the branch memory shadows Redis');
      await engine.forget({ kind: 'memory', ids: [redis.id] }, s.all);
      const back = await memory(engine, s.all, memcached.id);
      assert.equal(back.superseded_by, null, `Memcached is history of memory ${back.superseded_by} (the branch memory is ${valkey.id})`);
      assert.equal(back.status, 'active');
      const onMain = await currentInPack(engine, s.main, 'which cache do we use');
      assert.ok(onMain.ids.includes(memcached.id), onMain.text);
    });
  });

  describe('3. requirements about different properties are not exclusive; opposites are', () => {
    it('"the API must be backwards compatible" and "the API must be documented" both hold', async () => {
      const s = fresh();
      const compat = await engine.remember({ memory_type: 'convention', title: 'API', text: 'The API must be backwards compatible' }, s.all);
      const documented = await engine.remember({ memory_type: 'convention', title: 'API', text: 'The API must be documented' }, s.all);
      const c = await memory(engine, s.all, compat.id);
      assert.equal(c.status, 'active', `superseded by ${c.superseded_by}`);
      assert.deepEqual((c.temporal_facts ?? []).map((f) => f.status), ['current']);
      assert.equal(documented.supersedes, null);
      assert.deepEqual(openConflicts(documented), []);
    });

    it('"the request timeout must be 30 s" is replaced by "... must be 10 s" (control)', async () => {
      const s = fresh();
      const thirty = await engine.remember({ memory_type: 'convention', title: 'Timeout', text: 'The request timeout must be 30 s' }, s.all);
      const ten = await engine.remember({ memory_type: 'convention', title: 'Timeout', text: 'The request timeout must be 10 s' }, s.all);
      assert.deepEqual(ten.supersedes, [thirty.id]);
      assert.equal((await memory(engine, s.all, thirty.id)).status, 'superseded');
    });

    const opposites: [string, string, string][] = [
      ['Endpoint', 'The admin endpoint must be public', 'The admin endpoint must be private'],
      ['Service', 'The worker service must be stateless', 'The worker service must be stateful'],
      ['Client', 'The storage client must be synchronous', 'The storage client must be asynchronous'],
    ];
    for (const [title, before, after] of opposites) {
      it(`"${after}" replaces "${before}": opposites are two values of one property`, async () => {
        const s = fresh();
        const older = await engine.remember({ memory_type: 'convention', title, text: before }, s.all);
        const newer = await engine.remember({ memory_type: 'convention', title, text: after }, s.all);
        assert.deepEqual(newer.supersedes, [older.id]);
        const o = await memory(engine, s.all, older.id);
        assert.equal(o.status, 'superseded');
        assert.equal(o.superseded_by, newer.id);
      });
    }

    it('"must be configured" and "must be configurable" (one stem, the words do not tell): both stay, flagged as a possible conflict', async () => {
      const s = fresh();
      const configured = await engine.remember({ memory_type: 'convention', title: 'Proxy', text: 'The proxy must be configured' }, s.all);
      const configurable = await engine.remember({ memory_type: 'convention', title: 'Proxy', text: 'The proxy must be configurable' }, s.all);
      assert.equal((await memory(engine, s.all, configured.id)).status, 'active');
      assert.equal(configurable.supersedes, null);
      assert.deepEqual(openConflicts(configurable), [configured.id]);
    });

    it('which objects of "must be" are values of one property', () => {
      const fact = (text: string): { subject: string; predicate: string; object: string } => {
        const [f] = extractFacts(text, null);
        assert.ok(f, text);
        return f;
      };
      assert.deepEqual(fact('The API must be documented'), { subject: 'api', predicate: 'is', object: 'documented' });
      const pairs: [string, string, boolean][] = [
        ['backwards compatible', 'documented', false],
        ['idempotent', 'stateless', false],
        ['fast', 'thread-safe', false],
        ['30 s', '10 s', true],
        ['written in go', 'written in rust', true],
        ['utc', 'local time', true],
        ['main', 'trunk', true],
        // Opposites: a negating prefix, -ful/-less, or a pair with no shared stem.
        ['public', 'private', true],
        ['stateless', 'stateful', true],
        ['synchronous', 'asynchronous', true],
        ['sync', 'async', true],
        ['mutable', 'immutable', true],
        ['blocking', 'non-blocking', true],
        ['safe', 'unsafe', true],
        ['valid', 'invalid', true],
        ['allowed', 'disallowed', true],
        ['enabled', 'disabled', true],
        ['optional', 'required', true],
        ['internal', 'external', true],
        ['local', 'remote', true],
        ['online', 'offline', true],
        ['lazy', 'eager', true],
        ['fully documented', 'undocumented', true],
        // Different properties, opposites among them or not.
        ['public', 'documented', false],
        ['private', 'stateless', false],
        ['asynchronous', 'idempotent', false],
        ['immutable', 'thread-safe', false],
        ['thread-safe', 'null-safe', false],
        ['signed', 'designed', false],
        ['written in go', 'documented', false],
        ['30 s', 'configurable', false],
      ];
      for (const [a, b, exclusive] of pairs) {
        assert.equal(exclusiveObjects('is', a, b), exclusive, `${a} / ${b}`);
        assert.equal(exclusiveObjects('is', b, a), exclusive, `${b} / ${a}`);
      }
      assert.equal(exclusiveObjects('uses', 'redis', 'memcached'), true);
      // Neither clearly one property nor clearly two: a person looks.
      const unclear: [string, string][] = [['configured', 'configurable'], ['redis', 'memcached'], ['shut', 'closed']];
      for (const [a, b] of unclear) assert.equal(objectRelation('is', a, b), 'unclear', `${a} / ${b}`);
      assert.equal(objectRelation('is', 'backwards compatible', 'documented'), 'independent');
    });
  });
  describe('4. what was recorded on the default branch holds on every branch', () => {
    it('a caller on a feature branch finds memories and observations of main, not those of another branch', async () => {
      const s = fresh();
      const feature = { project: s.all.project, branch: 'feature-x' };
      const other = { project: s.all.project, branch: 'spike-y' };
      const onMain = await engine.remember({ ...cache, text: 'We use Memcached for the session cache' }, s.main);
      const onOther = await engine.remember({ memory_type: 'decision', title: 'Queue', text: 'We use RabbitMQ for the session queue' }, other);
      const [seen] = await engine.observe([{ type: 'edit', title: 'Tuned the session cache eviction', files_modified: ['src/cache.ts'] }], s.main);
      await engine.observe([{ type: 'edit', title: 'Tried a session queue consumer', files_modified: ['src/queue.ts'] }], other);
      await engine.settled();

      const pack = await recallContext(toolContext(engine, feature), { query: 'session cache and session queue' });
      const memories = pack.items.filter((i) => i.source_kind === 'memory').map((i) => i.source_id);
      assert.ok(memories.includes(onMain.id), `main's memory on feature-x: ${JSON.stringify(pack.items)}`);
      assert.ok(!memories.includes(onOther.id), "spike-y's memory reached feature-x");

      const nodes = (await recall(toolContext(engine, feature), { text: 'session cache eviction session queue consumer', k: 20 })).nodes;
      const observations = await Promise.all(nodes.map((n) => engine.getNode(n.node_id, feature)));
      const titles = observations.map((n) => n?.cell.title);
      assert.ok(titles.includes(seen.title ?? ''), `main's observation on feature-x: ${JSON.stringify(titles)}`);
      assert.ok(!titles.includes('Tried a session queue consumer'), "spike-y's observation reached feature-x");

      assert.deepEqual((await engine.listMemories(feature)).map((m) => m.id).sort(), [onMain.id]);
      assert.deepEqual((await engine.listObservations(feature)).map((o) => o.id), [seen.id]);
      assert.deepEqual((await engine.listSessions(feature)).map((x) => x.memory_session_id), [seen.memory_session_id]);
    });
  });
  describe("5. a repository whose default branch is its own (develop), as its callers name it", () => {
    it('records there hold project-wide: a decision on develop retires the project-wide one, and feature branches see it', async () => {
      const s = fresh();
      const develop = { project: s.all.project, branch: 'develop', defaultBranch: 'develop' };
      const memcached = await engine.remember({ ...cache, text: 'We use Memcached for the cache' }, s.all);
      const redis = await engine.remember({ ...cache, text: 'We use Redis for the cache' }, develop);
      assert.equal(redis.branch, 'develop');
      const old = await memory(engine, s.all, memcached.id);
      assert.equal(old.status, 'superseded', 'retired, not shadowed on develop only');
      assert.equal(old.superseded_by, redis.id);

      // Learned for the project: a later caller that does not name it gets the same answer.
      const [seen] = await engine.observe([{ type: 'edit', title: 'Moved the cache client to Redis', files_modified: ['src/cache.ts'] }], { project: s.all.project, branch: 'develop' });
      const feature = { project: s.all.project, branch: 'feature-x' };
      assert.deepEqual((await engine.listObservations(feature)).map((o) => o.id), [seen.id]);
      const onFeature = await currentInPack(engine, feature, 'which cache do we use');
      assert.ok(onFeature.ids.includes(redis.id) && !onFeature.ids.includes(memcached.id), onFeature.text);
      // The note is the engine's, whether the caller names the default branch or not.
      const line = (t: string): string => t.split('\n').filter((l) => l.includes(`memory ${redis.id}`)).join('\n');
      const named = await recallContext(toolContext(engine, { ...feature, defaultBranch: 'develop' }), { query: 'which cache do we use' });
      assert.match(line(named.text), new RegExp(`\\[CURRENT since [\\d-]+; replaces memory ${memcached.id}\\]`), named.text);
      assert.equal(line(onFeature.text), line(named.text));
    });
  });
});
