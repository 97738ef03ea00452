// Shared by the redaction tests: hostile inputs of about a megabyte, each redacted to what it
// should be in well under a second (the patterns are linear in the text, not quadratic). The
// bound only tells linear from quadratic: a pattern that backtracks over a megabyte takes minutes,
// while a linear one took up to 1.3 s on a machine at load 4, so the test allows 10 s.

import * as assert from 'node:assert/strict';
import { redact } from '../../src/core/capture/redact';

export const MB = 1024 * 1024;

/** What a megabyte may take to redact: tells a linear pattern from a backtracking one (see above). */
export const LINEAR_BOUND_MS = 10_000;

/** `unit` repeated to about one megabyte, then `tail`. */
export function megabyteOf(unit: string, tail = ''): string {
  return unit.repeat(Math.ceil(MB / unit.length)) + tail;
}

/** One spec a hostile text: redacted to what `expected` says, in well under a second (linear, not quadratic). */
export function redactsHostileFast(hostile: [what: string, text: string, expected: (text: string) => string][]): void {
  for (const [what, text, expected] of hostile) {
    it(`redacts ~1 MB of ${what} in well under a second`, () => {
      const start = performance.now();
      const out = redact(text);
      const ms = performance.now() - start;
      const want = expected(text);
      assert.ok(out === want, `${what}: got ${out.length} characters starting ${JSON.stringify(out.slice(0, 60))}, want ${want.length} starting ${JSON.stringify(want.slice(0, 60))}`);
      assert.ok(ms < LINEAR_BOUND_MS, `${what}: ${Math.round(ms)} ms`);
    });
  }
}
