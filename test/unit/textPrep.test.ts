import * as assert from 'node:assert/strict';
import { stem } from '../../src/core/retrieve/stemmer';
import { EXTRA_MARK, joinedTerms, pathTerms, prepareIndexText, prepareQueryText, splitIdentifier, tokenize } from '../../src/core/retrieve/textPrep';
import { diffSearchText, docstringLines, identifiersIn, isSkippedFile, parseUnifiedDiff, touchedNames } from '../../src/core/retrieve/diffText';

describe('text preparation', () => {
  describe('splitIdentifier', () => {
    it('splits camelCase, PascalCase, acronyms, snake_case, kebab-case and digits', () => {
      assert.deepEqual(splitIdentifier('parseArgsSync'), ['parse', 'args', 'sync']);
      assert.deepEqual(splitIdentifier('HTTPServerError'), ['http', 'server', 'error']);
      assert.deepEqual(splitIdentifier('exit_process'), ['exit', 'process']);
      assert.deepEqual(splitIdentifier('load-config'), ['load', 'config']);
      assert.deepEqual(splitIdentifier('utf8Decoder'), ['utf', '8', 'decoder']);
      assert.deepEqual(splitIdentifier('plain'), ['plain']);
    });
  });

  describe('stem (Porter)', () => {
    it('reduces inflections to one stem', () => {
      assert.equal(stem('caresses'), 'caress');
      assert.equal(stem('ponies'), 'poni');
      assert.equal(stem('running'), 'run');
      assert.equal(stem('hopping'), 'hop');
      assert.equal(stem('relational'), 'relat');
      assert.equal(stem('parsing'), stem('parsed'));
      assert.equal(stem('arguments'), stem('argument'));
      assert.equal(stem('completions'), stem('completion'));
      assert.equal(stem('configuration'), 'configur');
    });
    it('leaves short words and non-words alone', () => {
      assert.equal(stem('is'), 'is');
      assert.equal(stem('v8'), 'v8');
    });
  });

  describe('tokenize', () => {
    it('keeps identifiers whole and split, drops stop words, stems', () => {
      const terms = tokenize('The parser calls exitProcess when the flags are missing');
      assert.ok(terms.includes('exitprocess'), terms.join(' '));
      assert.ok(terms.includes('exit'));
      assert.ok(terms.includes('process'));
      assert.ok(terms.includes('flag'));
      assert.ok(terms.includes('miss'));
      assert.ok(!terms.includes('the'));
      assert.ok(!terms.includes('when'));
      assert.ok(!terms.includes('are'));
    });
    it('drops commit hashes and numbers over 7 digits, keeps issue numbers', () => {
      assert.deepEqual(tokenize('fix 3f9a2c7d1e4b5a6c7d8e9f00 and 12345678'), ['fix']);
      assert.deepEqual(tokenize('fixes #48213 (GH-1234567)'), ['fix', '48213', 'gh1234567', 'gh', '1234567']);
    });
  });

  it('pathTerms gives folders, the base name and its words', () => {
    const terms = pathTerms(['lib/argsParser.js']);
    assert.ok(terms.includes('lib'));
    assert.ok(terms.includes('argspars'));
    assert.ok(terms.includes('arg'));
    assert.ok(terms.includes('parser'));
  });

  it('prepareIndexText weighs the title and puts the extra text after its marker', () => {
    const text = prepareIndexText({ title: 'Add coerce option', text: 'Lets a function transform values', files: ['lib/coerce.js'], extra: 'self.coerceValue = fn' });
    const terms = text.split(' ');
    assert.ok(terms.filter((t) => t === 'coerc').length >= 4, text);
    const mark = terms.indexOf(EXTRA_MARK);
    assert.ok(mark > 0, 'extra marker present');
    assert.ok(terms.slice(mark + 1).includes('coercevalu'), text);
    assert.ok(!prepareIndexText({ title: 'x only', text: '' }).includes(EXTRA_MARK));
  });

  it('prepareQueryText prepares the question like the index, each term once', () => {
    assert.equal(prepareQueryText('Which change parses parsed arguments?'), 'chang pars argument');
  });
});

describe('joinedTerms', () => {
  it('joins consecutive words as code writes them, skipping stop words, not across sentences', () => {
    assert.deepEqual(joinedTerms('The host name of the server. Terminal width'), [stem('hostname'), stem('nameserver'), stem('terminalwidth')]);
  });

  it('gives nothing for one word, punctuation or an empty text', () => {
    assert.deepEqual(joinedTerms('hostname'), []);
    assert.deepEqual(joinedTerms('?!. ,'), []);
    assert.deepEqual(joinedTerms(''), []);
  });
});

describe('diff extraction', () => {
  const diff = [
    'diff --git a/lib/usage.js b/lib/usage.js',
    'index 1111111..2222222 100644',
    '--- a/lib/usage.js',
    '+++ b/lib/usage.js',
    '@@ -10,3 +10,4 @@ function buildUsage (yargs) {',
    '   const width = getWidth()',
    '-  if (!argv[key]) missing.push(key)',
    '+  // a zero value is still present',
    '+  if (!Object.prototype.hasOwnProperty.call(argv, key)) missing.push(key)',
    'diff --git a/README.md b/README.md',
    '--- a/README.md',
    '+++ b/README.md',
    '@@ -1,2 +1,2 @@ ## Options',
    '-Demanded keys must be truthy.',
    '+Demanded keys must be present.',
    'diff --git a/package-lock.json b/package-lock.json',
    '--- a/package-lock.json',
    '+++ b/package-lock.json',
    '@@ -1 +1 @@',
    '-  "lockfileVersion": 1',
    '+  "lockfileVersion": 2',
  ].join('\n');

  it('parses files, hunk headers, added, removed and context lines', () => {
    const files = parseUnifiedDiff(diff);
    assert.deepEqual(files.map((f) => f.path), ['lib/usage.js', 'README.md', 'package-lock.json']);
    assert.deepEqual(files[0].hunkContexts, ['function buildUsage (yargs) {']);
    assert.equal(files[0].added.length, 2);
    assert.equal(files[0].removed.length, 1);
    assert.deepEqual(files[0].context, ['  const width = getWidth()']);
  });

  it('keeps hunk headers, prose and identifiers, skips lock files', () => {
    const text = diffSearchText(parseUnifiedDiff(diff));
    assert.match(text, /function buildUsage/);
    assert.match(text, /a zero value is still present/);
    assert.match(text, /Demanded keys must be present\./);
    assert.match(text, /hasOwnProperty/);
    assert.doesNotMatch(text, /lockfileVersion/);
    assert.ok(isSkippedFile('yarn.lock') && isSkippedFile('dist/app.min.js') && !isSkippedFile('lib/a.js'));
  });

  it("counts a Python docstring's lines as prose, ahead of the code, and not as touched names", () => {
    const py = [
      'diff --git a/app.py b/app.py',
      '+++ b/app.py',
      '@@ -1,2 +1,9 @@',
      '+def teardown_appcontext(self, f):',
      '+    """Registers a function to be called when the application',
      '+    context ends, even when an unhandled exception occurred.',
      '+    """',
      '+    self.teardown_appcontext_funcs.append(f)',
      "+    label = '''not a docstring but quoted'''",
      '+    return f',
    ].join('\n');
    const files = parseUnifiedDiff(py);
    assert.deepEqual(docstringLines('app.py', files[0].added), [false, true, true, true, false, true, false]);
    assert.deepEqual(docstringLines('app.js', files[0].added), Array(7).fill(false), 'only Python files');
    const text = diffSearchText(files, 10_000);
    assert.ok(text.indexOf('context ends, even when') < text.indexOf('self.teardown_appcontext_funcs.append(f)'), text);
    const names = touchedNames(files);
    assert.ok(names.includes('teardown_appcontext_funcs') && !names.includes('Registers') && !names.includes('unhandled'), names.join(' '));
  });

  it('is bounded', () => {
    const big = ['diff --git a/a.js b/a.js', '+++ b/a.js', '@@ -1 +1 @@'];
    for (let i = 0; i < 3000; i++) big.push(`+const variableNumber${i} = computeSomething(${i})`);
    assert.ok(diffSearchText(parseUnifiedDiff(big.join('\n')), 2000).length <= 2000);
  });

  it('identifiersIn leaves out language keywords', () => {
    assert.deepEqual(identifiersIn('const value = parseArgs(argv); return value'), ['value', 'parseArgs', 'argv', 'value']);
  });
});
