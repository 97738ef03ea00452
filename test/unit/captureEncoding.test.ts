// Files not in UTF-8, through the real capture (vscode stubbed), a real engine and a real git
// repository (captureHarness.ts): the text before an edit is read from disk in the encoding the
// editor opened the file with (TextDocument.encoding), so that an edit of a Latin-1 or UTF-16 file
// is stored with its diff, in the right characters; an encoding only VS Code decodes
// (workspace.decode) gets its diff as well; binary content gets none.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Observation } from '../../src/core/model/records';
import { Harness, brief, encodeText, makeRepo, tmp } from './captureHarness';

const TEXT = '// café crème\nexport const prix = 2;\n// déjà vu\n';
const EDITED = TEXT.replace('prix = 2', 'prix = 3');
/** Latin-1 bytes read as UTF-8, or replacement characters: text that was not the file's. */
const MISDECODED = /\uFFFD|\\ufffd|Ã|Â/;

describe('capture of files not in UTF-8', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-encoding-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'README.md': 'shop\n' });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Writes `file` in `encoding`, opens it so, types `edited`, (after `wait` ms) saves it: the stored edit. */
  async function editIn(encoding: string, options: { text?: string; edited?: string; wait?: number; noDecode?: boolean } = {}): Promise<{ edit: Observation; obs: Observation[] }> {
    const file = path.join(ws, 'src/prix.ts');
    const text = options.text ?? TEXT;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, encodeText(text, encoding));
    h = await new Harness({ folders: [ws], noDecode: options.noDecode }).start();
    const doc = h.open(file, { text, encoding });
    h.type(doc, options.edited ?? EDITED);
    if (options.wait) await new Promise((r) => setTimeout(r, options.wait));
    h.save(doc);
    await h.flush();
    const obs = await h.observations(await h.project());
    const edit = obs.find((o) => o.type === 'edit');
    assert.ok(edit, brief(obs));
    return { edit, obs };
  }

  for (const encoding of ['windows1252', 'iso88591']) {
    it(`a ${encoding} file opened as ${encoding}: a one-line edit is stored as one hunk of one line, é as é`, async () => {
      const { edit, obs } = await editIn(encoding);
      assert.equal(edit.title, 'Edited src/prix.ts');
      assert.match(edit.subtitle ?? '', /1 hunk, \+1 −1 lines/, `${edit.subtitle}\n${edit.narrative}`);
      assert.match(edit.narrative ?? '', /prix = 3/, edit.narrative ?? '');
      assert.doesNotMatch(JSON.stringify(obs), MISDECODED, `${edit.subtitle}\n${edit.narrative}`);
    });
  }

  it('a Latin-1 file edited where a word with é changes: the diff holds the words as the editor showed them', async () => {
    const { edit } = await editIn('windows1252', { edited: TEXT.replace('// déjà vu', '// déjà vécu') });
    assert.match(edit.subtitle ?? '', /1 hunk, \+1 −1 lines/, `${edit.subtitle}\n${edit.narrative}`);
    assert.match(edit.narrative ?? '', /déjà vécu/, edit.narrative ?? '');
    assert.doesNotMatch(edit.narrative ?? '', MISDECODED, edit.narrative ?? '');
  });

  it('a UTF-16 file with its byte order mark: a one-line edit is one hunk of one line, with no change from the mark', async () => {
    const { edit } = await editIn('utf16le');
    assert.match(edit.subtitle ?? '', /1 hunk, \+1 −1 lines/, `${edit.subtitle}\n${edit.narrative}`);
    assert.doesNotMatch(edit.narrative ?? '', /\uFEFF/, edit.narrative ?? '');
    assert.ok(!(edit.narrative ?? '').includes('\u0000'), 'no NUL of a UTF-16 file read as UTF-8');
  });

  it('a UTF-8 file saved with a byte order mark (utf8bom): a one-line edit is one hunk of one line', async () => {
    const { edit } = await editIn('utf8bom');
    assert.match(edit.subtitle ?? '', /1 hunk, \+1 −1 lines/, `${edit.subtitle}\n${edit.narrative}`);
    assert.doesNotMatch(edit.narrative ?? '', /\uFEFF/, edit.narrative ?? '');
  });

  it('an encoding Node has no decoder for (ISO-8859-16): VS Code decodes the text before, and the edit has its diff', async () => {
    const { edit, obs } = await editIn('iso885916', { wait: 50 });
    assert.match(edit.subtitle ?? '', /1 hunk, \+1 −1 lines/, `${edit.subtitle}\n${edit.narrative}`);
    assert.doesNotMatch(JSON.stringify(obs), MISDECODED, `${edit.subtitle}\n${edit.narrative}`);
  });

  it('an encoding no decoder here knows, on a host without workspace.decode: the edit is stored without a diff, and without garbage', async () => {
    const { edit, obs } = await editIn('iso885916', { wait: 50, noDecode: true });
    assert.equal(edit.title, 'Edited src/prix.ts');
    assert.doesNotMatch(edit.subtitle ?? '', /hunk/, `${edit.subtitle}\n${edit.narrative}`);
    assert.doesNotMatch(JSON.stringify(obs), MISDECODED, `${edit.subtitle}\n${edit.narrative}`);
  });

  it('a host that does not tell the encoding (before VS Code 1.101): files are read as UTF-8, and a Latin-1 file gets no diff rather than garbage', async () => {
    const file = path.join(ws, 'src/prix.ts');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, encodeText(TEXT, 'windows1252'));
    fs.writeFileSync(path.join(ws, 'src/plain.ts'), TEXT);
    h = await new Harness({ folders: [ws], noDecode: true }).start();
    for (const name of ['src/prix.ts', 'src/plain.ts']) {
      const doc = h.open(path.join(ws, name), { text: TEXT });
      delete (doc as { encoding?: string }).encoding;
      h.type(doc, EDITED);
      h.save(doc);
    }
    await h.flush();
    const obs = await h.observations(await h.project());
    const subtitles = Object.fromEntries(obs.filter((o) => o.type === 'edit').map((o) => [o.title, o.subtitle]));
    assert.match(subtitles['Edited src/plain.ts'] ?? '', /1 hunk, \+1 −1 lines/, brief(obs));
    assert.doesNotMatch(subtitles['Edited src/prix.ts'] ?? 'missing', /hunk|missing/, brief(obs));
    assert.doesNotMatch(JSON.stringify(obs), MISDECODED, brief(obs));
  });

  it('binary content (NUL bytes) opened as text: the edit is stored without a diff', async () => {
    const text = 'MAGIC\u0000\u0001\u0000prix = 2\u0000\n';
    const { edit } = await editIn('windows1252', { text, edited: text.replace('prix = 2', 'prix = 3') });
    assert.equal(edit.title, 'Edited src/prix.ts');
    assert.doesNotMatch(edit.subtitle ?? '', /hunk/, `${edit.subtitle}\n${edit.narrative}`);
  });

  it('a Latin-1 file open in the editor, rewritten on disk (the editor reloads it): stored as changed on disk with its diff, not as an edit', async () => {
    const file = path.join(ws, 'src/prix.ts');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, encodeText(TEXT, 'windows1252'));
    h = await new Harness({ folders: [ws] }).start();
    const doc = h.open(file, { text: TEXT, encoding: 'windows1252' });
    // Another tool rewrites the file, in its encoding; the editor reloads the document.
    fs.writeFileSync(file, encodeText(EDITED, 'windows1252'));
    h.fsEvent('change', file);
    h.type(doc, EDITED, false);
    await h.flush();
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.map((o) => o.title), ['Changed on disk: src/prix.ts'], brief(obs));
  });
});
