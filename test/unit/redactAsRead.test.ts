// A secret is redacted in the text as it is read, not only as it is written: a key in full-width
// letters (ＡＫＩＡ...), one with accents the index drops, one cut by a zero-width character or by a
// terminal escape sequence reads as the key once printed, indexed or shown, and the index stored
// it folded to plain ASCII (search_text) where redaction had looked only at the written form. A
// private key given as lines (a diff's, a list's) whose BEGIN line is so written goes whole.
// Through git import (commit message, diff) and the session prompts, to every file of the store.
// Text without a hidden secret keeps its own characters.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REDACTED, redact, redactJson, redactKey, redactLines } from '../../src/core/capture/redact';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { printable } from '../../src/core/model/printable';
import type { Scope } from '../../src/core/model/records';
import { prepareIndexText } from '../../src/core/retrieve/textPrep';
import { filesContaining } from './diskFixture';
import { commitAll, git } from './gitImportFixture';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const AWS = (tag: string): string => `AKIA${tag}QWERTYUIOPAS12`;
const GITHUB = (tag: string): string => `ghp_${tag}AbCdEfGhIjKlMnOpQrStUvWxYz0123456789`.slice(0, 40);
/** `text` in full-width letters and digits (compatibility forms, NFKC makes them ASCII again). */
const fullWidth = (text: string): string => Array.from(text, (c) => (c >= '!' && c <= '~' ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join('');
/** `text` with a combining acute accent on every letter (the index drops it). */
const accented = (text: string): string => text.replace(/[A-Za-z]/g, (c) => `${c}\u0301`);

/** Whether the key can be read in `text`: as a reader is shown it (printable, no zero-width character) or as the index keeps it. */
function readable(text: string, key: string): boolean {
  const shown = printable(text).replace(/\p{Cf}/gu, '').normalize('NFKC');
  return shown.includes(key) || prepareIndexText({ title: '', text }).includes(key.toLowerCase());
}

describe('redaction of a secret as it is read', function () {
  this.timeout(120_000);

  const hidden: [string, string, string][] = [
    ['an AWS key in full-width letters', `deploy with ${fullWidth('AKIA')}${AWS('FW').slice(4)} today`, AWS('FW')],
    ['an AWS key wholly in full-width', `deploy with ${fullWidth(AWS('FA'))} today`, AWS('FA')],
    ['a GitHub token cut by a zero-width space', `token ghp_\u200b${GITHUB('ZW').slice(4)} here`, GITHUB('ZW')],
    ['an AWS key cut by a soft hyphen and a zero-width joiner', `key ${AWS('SH').slice(0, 6)}\u00ad${AWS('SH').slice(6, 12)}\u200d${AWS('SH').slice(12)}`, AWS('SH')],
    ['an AWS key cut by a terminal colour', `key ${AWS('ES').slice(0, 8)}\u001b[0m${AWS('ES').slice(8)}`, AWS('ES')],
    ['an AWS key cut by a control character', `key ${AWS('CC').slice(0, 8)}\u0007${AWS('CC').slice(8)}`, AWS('CC')],
    ['an AWS key with an accent on every letter', `key ${accented(AWS('AC'))}`, AWS('AC')],
    ['a password in a URL after a full-width colon', `clone https://deploy${fullWidth(':')}Zq9hunter2Secret@git.example.com/x`, 'Zq9hunter2Secret'],
  ];

  for (const [what, text, key] of hidden) {
    it(`redacts ${what}`, () => {
      assert.ok(readable(text, key), 'the case reads as the key');
      const out = redact(text);
      assert.ok(!readable(out, key), `the key can be read in ${JSON.stringify(out)}`);
      assert.ok(out.includes(REDACTED), out);
      assert.ok(!readable(redactJson(JSON.stringify({ note: text })), key), 'redactJson');
      assert.notEqual(redactKey(text), text, 'redactKey');
    });
  }

  it('redacts a private key as lines (a diff, a list of facts) whose BEGIN and END lines are in full-width letters, or whose body a zero-width space cuts', () => {
    const body = ['MIIEpQIBAAKCAQEAprobeFWkeybodyQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ', 'AAKCAQEAprobeFWkeybodyLineTwoQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ', 'short'];
    const wide = [fullWidth('-----BEGIN RSA PRIVATE KEY-----'), ...body, fullWidth('-----END RSA PRIVATE KEY-----')];
    assert.deepEqual(redactLines(wide), [REDACTED]);
    const cut = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEpQIBAAKCAQEA\u200bprobeZWkeybodyQQQ', '-----END RSA PRIVATE KEY-----'];
    assert.deepEqual(redactLines(cut), [REDACTED]);
    // Lines without a hidden secret: each as written.
    assert.deepEqual(redactLines(['café 配置：', `key ${AWS('LN')}`, 'plain']), ['café 配置：', `key ${REDACTED}`, 'plain']);
  });

  it('keeps text without a hidden secret as it is written: full-width punctuation, accents, zero-width joiners, colours', () => {
    for (const text of ['配置文件：见（README）。', 'café naïve Straße', 'team 👩\u200d💻 review', 'build \u001b[32mok\u001b[0m', 'ＡＢＣ full-width words', 'a line\r\nand another']) {
      assert.equal(redact(text), text);
    }
    // A secret the written text shows is redacted where it is, the rest kept as written.
    assert.equal(redact(`café ${AWS('KP')}`), `café ${REDACTED}`);
  });

  it('import-git stores no key that the message or the diff hides in full-width letters or accents', async () => {
    const { engine, dir } = await openTestEngine();
    const repo = tempDir('as-read-repo');
    const scope: Scope = { project: 'acme/as-read' };
    try {
      git(repo, ['init', '-q', '-b', 'main']);
      git(repo, ['config', 'commit.gpgsign', 'false']);
      commitAll(repo, {
        subject: `Rotate the deploy key ${fullWidth('AKIA')}${AWS('GM').slice(4)}`,
        body: `old one was ${accented(AWS('GB'))}`,
        files: { 'deploy/settings.txt': `aws_key_id ${fullWidth(AWS('GD'))}\n` },
        time: 1_700_000_000,
      });
      assert.equal((await importGitHistory(engine, repo, { scope })).imported, 1);
      await engine.close(); // every background write done before the files are read
      const leaked = ['GM', 'GB', 'GD'].filter((t) => filesContaining(dir, AWS(t)).length > 0);
      assert.deepEqual(leaked, [], 'keys stored as the index reads them');
    } finally {
      await engine.close();
      removeDir(repo);
      removeDir(dir);
    }
  });

  it('a session prompt keeps no key that a terminal escape sequence cuts', async () => {
    const { engine, dir } = await openTestEngine();
    const scope: Scope = { project: 'acme/as-read' };
    try {
      const key = AWS('PR');
      await engine.addPrompt(scope, 'session-as-read', `why does ${key.slice(0, 8)}\u001b[0m${key.slice(8)} fail?`);
      await engine.flush();
      await engine.close();
      const shown = (file: string): string => printable(fs.readFileSync(file).toString('latin1'));
      const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
      assert.deepEqual(walk(dir).filter((f) => shown(f).includes(key)).map((f) => path.relative(dir, f)), [], 'the prompt shown holds the key');
    } finally {
      await engine.close();
      removeDir(dir);
    }
  });
});
