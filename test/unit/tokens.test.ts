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

  it('cuts mixed CJK, emoji, accents and lone surrogates near the budget, a prefix every time, whatever was cut before', () => {
    const parts = ['日本語', '😀', ' ', 'é', '🚀🚀', '\n', 'word', '👩‍👩‍👧', '中文 ', 'ü ', '🎉 ', '한국어', '\uD800', 'x\uDC00'];
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const bad: string[] = [];
    for (let t = 0; t < 30; t++) {
      let text = '';
      for (let i = 0; i < 300; i++) text += parts[Math.floor(rnd() * parts.length)];
      for (const max of [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144]) {
        const cut = truncateToTokens(text, max);
        if (!text.startsWith(cut)) bad.push(`t${t} max ${max}: not a prefix`);
        if (countTokens(cut) > max) bad.push(`t${t} max ${max}: ${countTokens(cut)} tokens`);
        if (max >= 21 && countTokens(cut) < max - 6) bad.push(`t${t} max ${max}: only ${countTokens(cut)} tokens`);
      }
    }
    assert.deepEqual(bad.slice(0, 10), []);
    // A lone surrogate near the start, and in a long word (the piecewise path).
    assert.ok(countTokens(truncateToTokens(`a\uD800 ${'plain words that fit easily '.repeat(200)}`, 100)) >= 95);
    assert.ok(countTokens(truncateToTokens(`\uDC00${'z'.repeat(400)} ${'more words here '.repeat(100)}`, 60)) >= 54);
    // A megabyte of emoji and CJK.
    const big = '日本語のテキスト😀🚀 絵文字🎉'.repeat(60_000);
    for (const max of [50, 500, 5000]) {
      const cut = truncateToTokens(big, max);
      assert.ok(big.startsWith(cut) && countTokens(cut) <= max && countTokens(cut) > max * 0.9, `budget ${max}: ${countTokens(cut)} tokens`);
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
