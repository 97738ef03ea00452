import assert from 'node:assert/strict';
import { encode } from 'gpt-tokenizer';
import { countTokens, truncateToTokens } from '../../src/core/tokens';

describe('tokens', () => {
  it('counts with the o200k tokenizer, not characters', () => {
    assert.equal(countTokens(''), 0);
    assert.equal(countTokens('hello world'), 2);
    assert.equal(countTokens('hello world'), encode('hello world').length);
  });

  it('treats special-token text as plain text instead of throwing', () => {
    const n = countTokens('before <|endoftext|> after');
    assert.ok(n > 3);
    assert.equal(truncateToTokens('before <|endoftext|> after', 100), 'before <|endoftext|> after');
  });

  it('returns the text unchanged when it fits and empty for a zero budget', () => {
    assert.equal(truncateToTokens('short text', 10), 'short text');
    assert.equal(truncateToTokens('short text', 0), '');
    assert.equal(truncateToTokens('', 5), '');
  });

  it('keeps exactly the first max tokens of the full encoding of a long text', () => {
    const long = Array.from({ length: 5000 }, (_, i) => `const value${i} = computeThing(${i}); // note ${i % 7}`).join('\n');
    for (const max of [1, 7, 100, 1234]) {
      const cut = truncateToTokens(long, max);
      assert.ok(long.startsWith(cut), 'a prefix');
      assert.equal(countTokens(cut), max);
      assert.deepEqual(encode(cut), encode(long).slice(0, max));
    }
  });

  it('cuts a text of emoji and words into a prefix of it at every budget (no U+FFFD where a character was split)', () => {
    const texts = [
      `[1] Emoji party 🎉🎉 rocket 🚀\n${'We celebrated 🎉 the launch 🚀 of the ünïcödé parser 😀 with everyone. '.repeat(40)}`,
      `${'x'.repeat(3000)} 🎉🎉 ${'y'.repeat(3000)} 🚀`,
    ];
    for (const text of texts) {
      for (let max = 1; max <= 120; max++) {
        const cut = truncateToTokens(text, max);
        assert.ok(text.startsWith(cut), `budget ${max}: not a prefix: ${JSON.stringify(cut.slice(-40))}`);
        assert.ok(countTokens(cut) <= max, `budget ${max}: ${countTokens(cut)} tokens`);
      }
    }
  });

  it('grows its window for text with few characters per token', () => {
    const cjk = '日本語のテキストと絵文字😀🚀'.repeat(400);
    const cut = truncateToTokens(cjk, 500);
    assert.ok(cjk.startsWith(cut));
    const n = countTokens(cut);
    assert.ok(n <= 500 && n >= 495, `got ${n}`);
    assert.ok(!cut.endsWith('\ufffd'));
  });

  it('truncates a megabyte of text to a short prefix', () => {
    const huge = 'lorem ipsum dolor sit amet '.repeat(40000);
    const cut = truncateToTokens(huge, 200);
    assert.equal(countTokens(cut), 200);
    assert.ok(cut.length < 2000);
  });
});
