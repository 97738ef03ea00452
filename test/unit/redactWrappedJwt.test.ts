// A JWT that a fixed-width log or a paste wrapped over lines is redacted whole: every line it
// covers, the line breaks kept (as text and as lines), through observe to the store files. A JWT
// on one line, and a short 'eyJ' run followed by ordinary lines, are left to the one-line rules.

import { strict as assert } from 'node:assert';
import { REDACTED, redact, redactLines } from '../../src/core/capture/redact';
import { filesContaining } from './diskFixture';
import { openTestEngine, removeDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.Zq9KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const wrapAt = (text: string, width: number): string => text.match(new RegExp(`.{1,${width}}`, 'g'))!.join('\n');

describe('redaction of a JWT wrapped over lines', function () {
  this.timeout(120_000);

  it('redacts every line the token covers, as text and as lines', () => {
    for (const width of [40, 64, 76]) {
      const wrapped = wrapAt(JWT, width);
      const lines = wrapped.split('\n');
      assert.equal(redact(wrapped), lines.map(() => REDACTED).join('\n'), `width ${width}`);
      assert.deepEqual(redactLines(lines), lines.map(() => REDACTED), `width ${width}`);
    }
  });

  it('redacts two wrapped tokens one after the other, and a wrap that ends a line at a dot', () => {
    const second = JWT.replace('Zq9Kxw', 'Zq8Abc');
    const both = `${wrapAt(JWT, 76)}\n${wrapAt(second, 76)}`;
    assert.equal(redact(both), both.split('\n').map(() => REDACTED).join('\n'));
    for (let width = 20; width <= 100; width++) assert.ok(!/Zq9Kxw|dozjg/.test(redact(wrapAt(JWT, width))), `width ${width}`);
  });

  it('keeps what precedes and follows the token, and CRLF line breaks', () => {
    const text = `Authorization: Bearer ${JWT.slice(0, 50)}\n${JWT.slice(50)} was refused\nnext line`;
    assert.equal(redact(text), `Authorization: Bearer ${REDACTED}\n${REDACTED} was refused\nnext line`);
    assert.equal(redact(`token ${JWT.slice(0, 60)}\r\n${JWT.slice(60)} ok`), `token ${REDACTED}\r\n${REDACTED} ok`);
  });

  it('leaves a JWT on one line to the one-line rule and ordinary lines after an eyJ run as they are', () => {
    assert.equal(redact(`token ${JWT}\nnext line`), `token ${REDACTED}\nnext line`);
    assert.equal(redact('const header = eyJhbGciOiJIUzI1NiJ9\nfoo.bar'), 'const header = eyJhbGciOiJIUzI1NiJ9\nfoo.bar');
  });

  it('redacts ~1 MB of hostile eyJ lines in well under two seconds', () => {
    const MB = 1024 * 1024;
    for (const text of ['eyJa\n'.repeat(MB / 5), 'x eyJ\n'.repeat(MB / 6), 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3.\n'.repeat(MB / 44)]) {
      const start = performance.now();
      redact(text);
      assert.ok(performance.now() - start < 4000, `${Math.round(performance.now() - start)} ms`);
    }
  });

  it('an observation quoting the wrapped token leaves no byte of its signature in the store files', async () => {
    const { engine, dir } = await openTestEngine();
    try {
      await engine.observe([{ type: 'note', title: 'token from the log', narrative: `The gateway logged:\n${wrapAt(JWT, 76)}\nthen refused it.` }], { project: 'acme/jwt' });
      await engine.close();
      assert.deepEqual(filesContaining(dir, 'Zq9KxwRJSMe'), []);
    } finally {
      await engine.close().catch(() => undefined);
      removeDir(dir);
    }
  });
});
