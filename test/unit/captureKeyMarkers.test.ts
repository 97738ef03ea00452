// A BEGIN PRIVATE KEY line alone (a constant, a fixture) takes no line of code after it, and a one-word
// heading of sixteen letters is a hunk's header, not a key's base64 line.
import { strict as assert } from 'node:assert';
import { parseUnifiedDiff } from '../../src/core/retrieve/diffText';
import { describeEdit, editHunks } from '../../src/core/capture/editDiff';

describe('capture: a PEM marker string in code takes nothing after it', () => {
  it("a commit hunk whose header holds an unclosed '-----BEGIN PRIVATE KEY-----' literal keeps the file's changed lines", () => {
    const diff = [
      'diff --git a/src/pem.ts b/src/pem.ts',
      'index 111..222 100644',
      '--- a/src/pem.ts',
      '+++ b/src/pem.ts',
      "@@ -10,3 +10,3 @@ const PEM_HEADER = '-----BEGIN PRIVATE KEY-----';",
      ' const a = 1;',
      '-const b = 2;',
      '+const b = 3;',
      '@@ -40,3 +40,3 @@ export function compute(a: number) {',
      '   const x = a;',
      '-  return x + 1;',
      '+  return x + 2;',
      '',
    ].join('\n');
    const [file] = parseUnifiedDiff(diff);
    assert.deepEqual(file.added, ['const b = 3;', '  return x + 2;']);
    assert.deepEqual(file.removed, ['const b = 2;', '  return x + 1;']);
    assert.ok(file.hunkContexts.includes('export function compute(a: number) {'), JSON.stringify(file.hunkContexts));
  });

  it("an edit below a PEM marker constant is described with its changed lines (describeEdit)", () => {
    const top = "const PEM_HEADER = '-----BEGIN PRIVATE KEY-----';\n";
    const filler = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const before = `${top}${filler}\nexport function computeTotal(a: number) {\n  return a + 1;\n}\n`;
    const after = before.replace('return a + 1;', 'return a + 2;');
    const content = describeEdit('src/pem.ts', before, after);
    const text = JSON.stringify(content);
    assert.ok(text.includes('return a + 2'), text);
  });
});
describe('capture: one-word section headers are headers, not base64', () => {
  it('a commit hunk under a one-word long heading (Acknowledgements) keeps its header', () => {
    const diff = [
      'diff --git a/README.md b/README.md',
      'index 111..222 100644',
      '--- a/README.md',
      '+++ b/README.md',
      '@@ -40,3 +40,3 @@ Acknowledgements',
      ' Thanks to everyone.',
      '-Old line of thanks.',
      '+New line of thanks.',
      '',
    ].join('\n');
    const [file] = parseUnifiedDiff(diff);
    assert.deepEqual(file.hunkContexts, ['Acknowledgements']);
  });

  it('an edit under a one-word heading line (Internationalization) gets it as header', () => {
    const before = ['Internationalization', '', 'We support en and fr.', 'More text here.', ''].join('\n');
    const after = before.replace('en and fr', 'en, de and fr');
    const [hunk] = editHunks(before, after);
    assert.equal(hunk.header, 'Internationalization');
  });
});
