// Secret files reached through a symbolic link are not captured (README, Privacy: "anything in
// `.env*` files", SSH key files and `secrets/` folders are not stored): a link named like source
// to `.env`, a folder linked to `secrets/`, a link to an SSH key outside the workspace. Links to
// ordinary files, and a workspace folder opened through a link, are captured as before. Through
// the real capture (vscode stubbed), a real engine and real git repositories (captureHarness.ts).

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, brief, makeRepo, tmp, writeFiles } from './captureHarness';

describe('capture of files reached through a symbolic link', function () {
  this.timeout(120_000);
  let root: string;
  let ws: string;
  let h: Harness | undefined;

  beforeEach(() => {
    root = tmp('cm-link-');
    ws = path.join(root, 'shop');
    makeRepo(ws, { 'src/price.ts': 'export const price = 1;\n', '.env': 'FEATURE_MODE=purplemonkey\n', 'secrets/prod.yaml': 'mode: a\n' });
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function editAndSave(rel: string, text: string): Promise<string> {
    const doc = h!.open(path.join(ws, rel));
    h!.type(doc, text);
    h!.save(doc);
    h!.fsEvent('change', path.join(ws, rel));
    await h!.flush();
    return JSON.stringify(await h!.observations(await h!.project()));
  }

  it('a link named like source (app.cfg) to .env: neither its name nor its lines are stored', async () => {
    fs.symlinkSync('.env', path.join(ws, 'app.cfg'));
    h = await new Harness({ folders: [ws] }).start();
    const stored = await editAndSave('app.cfg', 'FEATURE_MODE=purplemonkey\nOTHER_MODE=zebracrossing\n');
    assert.doesNotMatch(stored, /app\.cfg|zebracrossing|purplemonkey/, brief(await h.observations(await h.project())));
  });

  it('a folder linked to secrets/ (conf): a file edited through it is not stored', async () => {
    fs.symlinkSync('secrets', path.join(ws, 'conf'));
    h = await new Harness({ folders: [ws] }).start();
    const stored = await editAndSave('conf/prod.yaml', 'mode: a\nregion: quokkaland\n');
    assert.doesNotMatch(stored, /prod\.yaml|quokkaland/, brief(await h.observations(await h.project())));
  });

  it('a link in the workspace to an SSH key outside it (deploy/key.txt -> id_ed25519): not stored', async () => {
    writeFiles(path.join(root, 'home/.ssh'), { id_ed25519: '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n' });
    fs.mkdirSync(path.join(ws, 'deploy'));
    fs.symlinkSync(path.join(root, 'home/.ssh/id_ed25519'), path.join(ws, 'deploy/key.txt'));
    h = await new Harness({ folders: [ws] }).start();
    const stored = await editAndSave('deploy/key.txt', '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\nplatypus\n');
    assert.doesNotMatch(stored, /key\.txt|platypus/, brief(await h.observations(await h.project())));
  });

  it('a link to an ordinary source file, and a workspace folder opened through a link, are still captured', async () => {
    fs.symlinkSync('price.ts', path.join(ws, 'src/cost.ts'));
    const link = path.join(root, 'shop-link');
    fs.symlinkSync(ws, link);
    h = await new Harness({ folders: [link], repoRoots: [ws] }).start();
    const a = h.open(path.join(link, 'src/cost.ts'));
    h.type(a, 'export const price = 2;\n');
    h.save(a);
    const b = h.open(path.join(link, '.env'));
    h.type(b, 'FEATURE_MODE=purplemonkey\nOTHER_MODE=zebracrossing\n');
    h.save(b);
    await h.flush();
    const obs = await h.observations(await h.project());
    assert.deepEqual(obs.filter((o) => o.type === 'edit').map((o) => o.files_modified), ['["src/cost.ts"]'], brief(obs));
    assert.doesNotMatch(JSON.stringify(obs), /zebracrossing|\.env/, brief(obs));
  });
});
