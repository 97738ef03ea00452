// A PGP private key block as gpg --armor writes it ends its body with a short line, then a
// checksum line (=XXXX) before its END line: the short line is the key's too, and goes with it,
// as text, as lines, and through git import to the store files.

import { strict as assert } from 'node:assert';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { REDACTED, redact, redactLines } from '../../src/core/capture/redact';
import type { MemoryEngine } from '../../src/core/engine';
import { filesContaining } from './diskFixture';
import { makeRepo } from './gitImportFixture';
import { openTestEngine, removeDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

/** 64-character body lines, a short last line, the armor's checksum line. */
function pgpBlock(lastLine: string): string {
  const lines = Array.from({ length: 6 }, (_, i) => `lQOYBGZq9PgpBody${i}`.padEnd(64, 'Ab1+xY'));
  return ['-----BEGIN PGP PRIVATE KEY BLOCK-----', '', ...lines, lastLine, '=Zq9X', '-----END PGP PRIVATE KEY BLOCK-----'].join('\n');
}

describe('redaction of a PGP private key block', function () {
  this.timeout(120_000);

  it('takes the short last line before the checksum line, as text and as lines', () => {
    const block = pgpBlock('Zq9PgpLastLine1');
    assert.equal(redact(block), REDACTED);
    assert.deepEqual(redactLines(block.split('\n')), [REDACTED]);
    assert.equal(redact(`key:\n${block}\nafter`), `key:\n${REDACTED}\nafter`);
  });

  it('still takes a key whose last line is long, and keeps a checksum-like line outside a key', () => {
    const block = pgpBlock('Zq9PgpLastLineLongerThanSixteen');
    assert.ok(!redact(block).includes('Zq9PgpLast'), redact(block));
    assert.equal(redact('total =abcd\nnext line'), 'total =abcd\nnext line');
  });

  describe('through git import', () => {
    let engine: MemoryEngine;
    let dir: string;
    let repo: string | undefined;
    beforeEach(async () => {
      ({ engine, dir } = await openTestEngine());
    });
    afterEach(async () => {
      await engine.close().catch(() => undefined);
      removeDir(dir);
      if (repo) removeDir(repo);
      repo = undefined;
    });

    it('a commit adding the key leaves no line of it in the store files', async () => {
      ({ repo } = makeRepo([{ subject: 'Add the release signing key', files: { 'release/signing.asc.txt': `${pgpBlock('Zq9PgpLastLine2')}\n` }, time: 1_700_000_000 }]));
      const r = await importGitHistory(engine, repo, { scope: { project: 'acme/pgp' }, documents: false });
      assert.equal(r.imported, 1);
      await engine.close();
      assert.deepEqual(filesContaining(dir, 'lQOYBGZq9PgpBody'), []);
      assert.deepEqual(filesContaining(dir, 'Zq9PgpLastLine2'), []);
    });
  });
});
