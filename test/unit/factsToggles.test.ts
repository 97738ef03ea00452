// Decisions that turn something on or off ("enable request logging in production", "source maps
// are disabled in production builds") or say that something is done with or without another
// thing ("retry failed uploads with backoff" / "... without backoff") gave no fact, so a later
// decision saying the opposite left both current and an agent read both. Now each is a value of
// its subject: enabled / disabled, with X / no X; the opposite value ends the older decision,
// and "with" another thing is no contradiction ("with backoff" and "with jitter" both hold).

import * as assert from 'node:assert/strict';
import { extractFacts, objectRelation } from '../../src/core/compress/facts';
import type { ExtractedFact } from '../../src/core/compress/facts';
import { itReads, itYieldsNoFact } from './fixtures/factCases';
import { memoryPairs } from './fixtures/memoryPairs';
import { openTestEngine, removeDir } from './mcpFixture';

describe('facts: turned on or off, done with or without', () => {
  const cases: [string, ExtractedFact[]][] = [
    ['Enable request logging in production.', [{ subject: 'request logging in production', predicate: 'is', object: 'enabled' }]],
    ['Disable request logging in production, it leaks tokens.', [{ subject: 'request logging in production', predicate: 'is', object: 'disabled' }]],
    ['We turned off telemetry.', [{ subject: 'telemetry', predicate: 'is', object: 'disabled' }]],
    ['Turn on strict mode for the TypeScript build.', [{ subject: 'strict mode for the typescript build', predicate: 'is', object: 'enabled' }]],
    ['Source maps are disabled in production builds.', [{ subject: 'source maps in production builds', predicate: 'is', object: 'disabled' }]],
    ['Source maps are now enabled in production builds.', [{ subject: 'source maps in production builds', predicate: 'is', object: 'enabled' }]],
    ['The query cache is turned off.', [{ subject: 'query cache', predicate: 'is', object: 'disabled' }]],
    ['Disable telemetry by default.', [{ subject: 'telemetry', predicate: 'is', object: 'disabled' }]],
    ['Enable the flaky upload test again.', [{ subject: 'flaky upload test', predicate: 'is', object: 'enabled' }]],
    ['Retry failed uploads with backoff.', [{ subject: 'retry failed uploads', predicate: 'with', object: 'backoff' }]],
    ['We retry failed uploads without backoff.', [{ subject: 'retry failed uploads', predicate: 'with', object: 'no backoff' }]],
    ['Run the migrations without a transaction, since Postgres locks the table.', [{ subject: 'run the migrations', predicate: 'with', object: 'no transaction' }]],
    // The number is what the sentence sets; its "with" is read by the number's own pattern.
    ['Retry failed uploads five times with backoff.', [{ subject: 'retry failed uploads', predicate: 'is', object: '5 times' }]],
  ];
  itReads(cases);

  const none = [
    'Do not enable request logging.',
    'We might disable telemetry.',
    'Should we turn off source maps?',
    'If the cache is disabled, requests are slow.',
    'It is disabled.',
    // "With" that does not end the clause says how, not a value: "with a body are logged".
    'Requests with a body are logged.',
    'We never deploy without a review.',
    'We considered running the migrations without a transaction.',
    // More than one switch's worth: for some users, in one place for some routes.
    'Feature flag new-checkout is enabled for 10% of users.',
    'Enable caching in production for API routes.',
  ];
  itYieldsNoFact(none);

  it('"with" one thing and "with" another both hold; "with X" and "without X" exclude each other', () => {
    assert.equal(objectRelation('with', 'backoff', 'no backoff'), 'exclusive');
    assert.equal(objectRelation('with', 'no backoff', 'backoff'), 'exclusive');
    assert.equal(objectRelation('with', 'backoff', 'jitter'), 'independent');
    assert.equal(objectRelation('with', 'no backoff', 'no jitter'), 'independent');
    assert.equal(objectRelation('is', 'enabled', 'disabled'), 'exclusive');
  });

  it('stays linear on long runs of words', () => {
    const text = `${'enable a '.repeat(5000)}in ${'retry a '.repeat(5000)} with ${'x '.repeat(5000)}. ${'a is '.repeat(5000)}disabled in b`;
    const started = performance.now();
    extractFacts(text, null);
    assert.ok(performance.now() - started < 1500);
  });
});

describe('facts: the opposite value ends the older decision (real engine)', function () {
  this.timeout(120_000);
  const { pair, itSupersedes, itKeepsCurrent } = memoryPairs('facts-toggles');

  const replaced: [string, string][] = [
    ['Enable request logging in production.', 'Disable request logging in production: it leaks tokens.'],
    ['Source maps should be enabled in production builds.', 'Source maps are disabled in production builds.'],
    ['Retry failed uploads with backoff.', 'Retry failed uploads without backoff, the queue already spaces them.'],
    ['Run the migrations without a transaction.', 'Run the migrations with a transaction.'],
  ];
  itSupersedes(replaced);

  itKeepsCurrent('the same value again, another subject, or with another thing leaves the older decision current', [
    ['Enable request logging in production.', 'We enabled request logging in production, for the audit.'],
    ['Enable request logging in production.', 'Disable request logging in staging.'],
    ['Retry failed uploads with backoff.', 'Retry failed uploads with jitter.'],
  ]);

  it('how a thing is done is no other fact of the same files: no conflict to review', async () => {
    const engine = await openTestEngine();
    try {
      const scope = { project: 'github.com/acme/facts-toggles-files' };
      const files = ['src/upload.ts'];
      const a = await engine.engine.remember({ memory_type: 'decision', title: 'Uploads', text: 'Use p-retry for uploads.', files }, scope);
      await engine.engine.remember({ memory_type: 'decision', title: 'Uploads', text: 'Retry failed uploads with jitter.', files }, scope);
      const [a2] = await engine.engine.getMemories([a.id], scope, { includeSuppressed: true });
      assert.equal(a2.status, 'active');
      assert.deepEqual(a2.conflicts ?? [], []);
    } finally {
      await engine.engine.close();
      removeDir(engine.dir);
    }
  });

  it('how a thing is done says nothing against how often or whether: no conflict to review', async () => {
    for (const [older, newer] of [
      ['Retry failed uploads five times.', 'Retry failed uploads with jitter.'],
      ['Retry failed uploads with jitter.', 'Retry failed uploads five times.'],
    ]) {
      const { a } = await pair(older, newer);
      assert.equal(a.status, 'active');
      assert.deepEqual(a.conflicts ?? [], [], `${older} / ${newer}`);
    }
  });
});
