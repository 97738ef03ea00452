// Facts are what a sentence says the project does (src/core/compress/facts.ts). A sentence that
// negates a statement, only asks, considers, proposes or rejects it, quotes someone else, or makes
// it a condition says nothing of the kind: read as "uses X" it would be a false fact, and it would
// retire a true memory (README "Memories that stay true"). A leading time phrase says when, not
// what: the subject comes after it.

import * as assert from 'node:assert/strict';
import { extractFacts } from '../../src/core/compress/facts';
import type { ExtractedFact } from '../../src/core/compress/facts';
import type { Memory } from '../../src/core/model/records';
import { itReads, itYieldsNoFact } from './fixtures/factCases';
import { memoryPairs } from './fixtures/memoryPairs';

describe('facts: negated, hedged, quoted and questioning sentences state nothing', () => {
  const none: string[] = [
    'We decided NOT to use Redis for the session cache.',
    'We decided not to use Redis for caching.',
    'We should not use Redis for caching',
    "We shouldn't use Redis for caching.",
    'We don’t use Redis for caching.',
    'Never use moment.js for dates.',
    'Avoid using lodash for array helpers.',
    'We decided against using Redis for caching.',
    'No need to use Redis for caching.',
    'We will not migrate from Postgres to MySQL.',
    'We have not yet switched to Vitest for unit tests.',
    'We considered switching from Postgres to MySQL but decided against it.',
    'We could use Redis for caching.',
    'Maybe use Redis for caching.',
    'We might drop Redux.',
    'We discussed whether to use Redis for caching.',
    'Bob suggested: "use MongoDB for the orders service". We rejected this.',
    'Bob proposed "use MongoDB for the orders service"; we rejected it.',
    "Bob said 'use MongoDB for the orders service' yesterday.",
    'Alice wrote “switched from Jest to Vitest for unit tests” in the draft.',
    'Rejected: use GraphQL for the public API',
    'Proposal: use GraphQL for the public API.',
    'Should we use Kafka for the event bus?',
    'Should we use Kafka for the event bus',
    'Why did we switch the vector store to LanceDB?',
    'Should we stop using Moment.js?',
    'We will not stop using Jest.',
    'If the replica lags, use the primary for reads.',
    'Unless told otherwise, switch to pnpm for installs.',
    'The team never uses Redis for caching.',
    'Nobody uses Redis for caching.',
    'The orders service is not using PostgreSQL anymore.',
  ];
  itYieldsNoFact(none);

  it('a quoted or rejected proposal next to a stated decision: only the decision is a fact', () => {
    assert.deepEqual(extractFacts('Bob suggested: "use MongoDB for the orders service". We use PostgreSQL for the orders service.', null), [
      { subject: 'orders service', predicate: 'uses', object: 'postgresql' },
    ]);
    assert.deepEqual(extractFacts('Rejected: use GraphQL for the public API. Use REST for the public API.', null), [{ subject: 'public api', predicate: 'uses', object: 'rest' }]);
  });
});

describe('facts: the guard reads only the clause before the verb', () => {
  const cases: [string, string | null, ExtractedFact[]][] = [
    ['Because npm could not resolve peers, we switched to pnpm for installs.', null, [{ subject: 'installs', predicate: 'uses', object: 'pnpm' }]],
    ['Although Redis was considered, we use Memcached for the session cache.', null, [{ subject: 'session cache', predicate: 'uses', object: 'memcached' }]],
    ['We considered Redis but chose Memcached for caching.', null, [{ subject: 'caching', predicate: 'uses', object: 'memcached' }]],
    ["We didn't like Jest so we switched to Vitest for unit tests.", null, [{ subject: 'unit tests', predicate: 'uses', object: 'vitest' }]],
    ['Jest could not handle ESM; use Vitest for unit tests.', null, [{ subject: 'unit tests', predicate: 'uses', object: 'vitest' }]],
    ['We switched from Jest to Vitest because Jest could not handle ESM.', null, [{ subject: '', predicate: 'uses', object: 'vitest', replaces: 'jest' }]],
    ['We should use pnpm for package management.', null, [{ subject: 'package management', predicate: 'uses', object: 'pnpm' }]],
    ['Use pnpm for "package management".', null, [{ subject: 'package management', predicate: 'uses', object: 'pnpm' }]],
    ['The not-found handler uses express.', null, [{ subject: 'not-found handler', predicate: 'uses', object: 'express' }]],
    // "No longer", "don't use" and "stop using" keep saying what stopped.
    ['We no longer use Moment.js for dates.', null, [{ subject: 'dates', predicate: 'no longer uses', object: 'moment.js', replaces: 'moment.js' }]],
    ["Don't use moment.js for dates", null, [{ subject: 'dates', predicate: 'no longer uses', object: 'moment.js', replaces: 'moment.js' }]],
    ['Stop using enums', 'typescript style', [{ subject: 'typescript style', predicate: 'no longer uses', object: 'enums', replaces: 'enums' }]],
    ['The orders service no longer uses PostgreSQL.', null, [{ subject: '', predicate: 'no longer uses', object: 'postgresql', replaces: 'postgresql' }]],
  ];
  for (const [text, topic, expected] of cases) {
    it(`reads "${text}"`, () => {
      assert.deepEqual(extractFacts(text, topic), expected);
    });
  }
});

describe('facts: a leading time phrase is not part of the subject', () => {
  const orders = [{ subject: 'orders service', predicate: 'uses', object: 'sqlite' }];
  const cases: [string, ExtractedFact[]][] = [
    ['As of 2026-03-01 the orders service uses SQLite.', orders],
    ['Starting today, the orders service uses SQLite.', orders],
    ['Since March the orders service runs on SQLite.', orders],
    ['From 2026-03-01 on, the orders service uses SQLite.', orders],
    ['In 2026 the orders service uses SQLite.', orders],
    ['This week, the orders service uses SQLite.', orders],
    ['On Monday we moved the orders service to SQLite.', orders],
    ['Today the orders service uses SQLite.', orders],
    ['As of v2.1, the orders service uses SQLite.', orders],
    ['In May we switched to Vitest for unit tests.', [{ subject: 'unit tests', predicate: 'uses', object: 'vitest' }]],
    ['From now on, use pnpm for package management.', [{ subject: 'package management', predicate: 'uses', object: 'pnpm' }]],
    // "Since" that gives a reason is not a time.
    ['Since Redis is slow, we use Memcached for caching.', [{ subject: 'caching', predicate: 'uses', object: 'memcached' }]],
  ];
  itReads(cases);
});

describe('facts: the guard and the time phrases stay linear on hostile text', function () {
  this.timeout(120_000);
  const shapes: Array<[string, (n: number) => string]> = [
    ['straight double quotes', (n) => '"'.repeat(n)],
    ['curly opening quotes', (n) => '“'.repeat(n)],
    ['single quotes after spaces', (n) => " 'a".repeat(n / 3)],
    ['quotes, then a statement', (n) => `${'"a b '.repeat(n / 5)}use a for b`],
    ['many clauses before a statement', (n) => `${'x, we '.repeat(n / 6)}use a for b`],
    ['many negations before a statement', (n) => `${'no '.repeat(n / 3)}use a for b`],
    ['spaces after "no" before a statement', (n) => `no${' '.repeat(n)}use a for b`],
    ['closing characters after a question mark', (n) => `use a for b?${')'.repeat(n)}x`],
    ['a long leading run of non-word characters', (n) => `${'-'.repeat(n)}use a for b`],
    ['repeated time phrases', (n) => `${'as of today '.repeat(n / 12)}the orders service uses b`],
    ['many statements in one sentence', (n) => 'use a for b, '.repeat(n / 13)],
    // Shapes that once took 1-2 s for 20,000 characters (the unanchored patterns).
    ['one run of word characters and dots', (n) => 'a.'.repeat(n / 2)],
    ['one long word', (n) => 'a'.repeat(n)],
    ['a long word after a keyword', (n) => `use ${'a'.repeat(n)}`],
    ['runs that start with @ and .', (n) => '@.a'.repeat(n / 3)],
    ['a long run of punctuation ending a phrase', (n) => `use a for b${':'.repeat(n)}x`],
    ['a long run of spaces inside a phrase', (n) => `use a for b${' '.repeat(n)}x`],
  ];
  for (const [what, make] of shapes) {
    it(`${what}: 80,000 characters in well under a second`, () => {
      const text = make(80_000);
      extractFacts(make(1000), null);
      const started = performance.now();
      extractFacts(text, null);
      const ms = performance.now() - started;
      assert.ok(ms < 1500, `${what}: ${text.length} characters took ${ms.toFixed(0)} ms`);
    });
  }
});

describe('facts: what hedged sentences do to older memories (real engine)', function () {
  this.timeout(120_000);
  const { pair } = memoryPairs('facts-truth');
  const factsOf = (m: Memory): string[] => (m.temporal_facts ?? []).map((f) => `${f.subject} ${f.predicate} ${f.object}`);

  const keeps: [string, string, string][] = [
    ['We use Memcached for the session cache', 'We decided NOT to use Redis for the session cache.', 'decision'],
    ['Use date-fns for dates.', 'Never use moment.js for dates.', 'convention'],
    ['We use PostgreSQL for the orders service', 'We will not migrate from PostgreSQL to MySQL.', 'decision'],
    ['We use Jest for unit tests', 'We considered switching from Jest to Vitest but decided against it.', 'decision'],
    ['We use PostgreSQL for the orders service', 'Bob proposed "use MongoDB for the orders service"; we rejected it.', 'note'],
    ['We use RabbitMQ for the event bus', 'Should we use Kafka for the event bus?', 'note'],
    ['Use the read replica for reads.', 'If the replica lags, use the primary for reads.', 'convention'],
  ];
  for (const [older, newer, type] of keeps) {
    it(`"${newer}" states no fact and leaves "${older}" current`, async () => {
      const { a, b } = await pair(older, newer, type);
      assert.deepEqual(factsOf(b), []);
      assert.equal(a.status, 'active', `superseded by ${a.superseded_by}`);
    });
  }

  for (const newer of ['As of 2026-03-01 the orders service uses SQLite.', 'Since March the orders service runs on SQLite.', 'Starting today, the orders service uses SQLite.']) {
    it(`a dated change "${newer}" supersedes "The orders service uses PostgreSQL."`, async () => {
      const { a, b } = await pair('The orders service uses PostgreSQL.', newer);
      assert.deepEqual(factsOf(b), ['orders service uses sqlite']);
      assert.equal(a.status, 'superseded');
      assert.equal(a.superseded_by, b.id);
    });
  }
});
