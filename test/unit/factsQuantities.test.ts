// A decision often sets a number: "the request timeout is 10 seconds", "retry failed uploads
// five times". Read as a value of its subject, a later decision that sets another number for the
// same subject ends the older one (README "Memories that stay true"); without it both stayed
// current and an agent read two timeouts. Number words count as their digits.

import * as assert from 'node:assert/strict';
import { extractFacts } from '../../src/core/compress/facts';
import type { ExtractedFact } from '../../src/core/compress/facts';
import { itReads, itYieldsNoFact } from './fixtures/factCases';
import { memoryPairs } from './fixtures/memoryPairs';

describe('facts: a number a decision sets is a value of its subject', () => {
  const cases: [string, ExtractedFact[]][] = [
    ['The request timeout is 10 seconds.', [{ subject: 'request timeout', predicate: 'is', object: '10 seconds' }]],
    ['Request timeout is now 30 seconds, because uploads were cut off.', [{ subject: 'request timeout', predicate: 'is', object: '30 seconds' }]],
    ['Set the request timeout to 30 seconds.', [{ subject: 'request timeout', predicate: 'is', object: '30 seconds' }]],
    ['We raised the connection pool size to 20.', [{ subject: 'connection pool size', predicate: 'is', object: '20' }]],
    ['The upload batch size is five hundred.', []],
    ['The upload batch size is 500.', [{ subject: 'upload batch size', predicate: 'is', object: '500' }]],
    ['We retry failed uploads five times with exponential backoff.', [{ subject: 'retry failed uploads', predicate: 'is', object: '5 times' }]],
    ['Retry failed uploads twice, without backoff.', [{ subject: 'retry failed uploads', predicate: 'is', object: '2 times' }]],
    ['The worker retries failed jobs 3 times.', [{ subject: 'retry failed jobs', predicate: 'is', object: '3 times' }]],
    ['The request timeout must be thirty seconds.', [{ subject: 'request timeout', predicate: 'is', object: '30 seconds' }]],
    // Only number words are read as numbers (not a name every object has, such as "constructor").
    ['Services must be constructor injected.', [{ subject: 'services', predicate: 'is', object: 'constructor injected' }]],
  ];
  itReads(cases);

  const none = [
    'We think the build is 10 minutes slower.',
    'It is 10 seconds.',
    'Should the request timeout be 10 seconds?',
    'If the queue is 100 deep, drop the oldest.',
    'We might retry failed uploads five times.',
    'We decided not to retry failed uploads five times.',
    'Issue 42 is 3 days old.',
    // What is retried must be named: "retry" alone would make every count one subject's.
    'Uploads are retried 5 times.',
  ];
  itYieldsNoFact(none);

  it('stays linear on a long run of numbers and words', () => {
    const text = `${'the timeout is 1 '.repeat(5000)}seconds ${'retry a '.repeat(5000)}5 times`;
    const started = performance.now();
    extractFacts(text, null);
    assert.ok(performance.now() - started < 1500);
  });
});

describe('facts: a newer number ends the older decision (real engine)', function () {
  this.timeout(120_000);
  const { itSupersedes, itKeepsCurrent } = memoryPairs('facts-quantities');

  const replaced: [string, string][] = [
    ['The request timeout is 10 seconds.', 'Set the request timeout to 30 seconds.'],
    ['We retry failed uploads five times with exponential backoff.', 'We retry failed uploads twice without backoff.'],
  ];
  itSupersedes(replaced);

  itKeepsCurrent('the same number said again, or a number of another subject, leaves the older decision current', [
    ['The request timeout is 10 seconds.', 'The request timeout is ten seconds, measured from the first byte.'],
    ['The request timeout is 10 seconds.', 'The connection pool size is 10.'],
  ]);
});
