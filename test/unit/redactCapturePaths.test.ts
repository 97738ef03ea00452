// Redaction on the capture paths: text is redacted whole before it is cut, a commit's message is
// redacted whole, a hunk's header is no line of a key, a changed line is redacted as its file reads
// (a Secret's kind, a Terraform variable's name far above it), and a linter's message that quotes a
// secret of the edited lines loses it. Each case checks every byte under the store folder.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Uri} from './captureHarness';
import { Harness, git, makeRepo, runInTerminal, tmp } from './captureHarness';
import { filesContaining } from './diskFixture';
import { commitAll, git as gitIn, makeRepo as makeHistory } from './gitImportFixture';
import { describeEdit, editHunks } from '../../src/core/capture/editDiff';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { REDACTED, redact } from '../../src/core/capture/redact';
import { firstFailingTest } from '../../src/core/capture/testOutput';
import { MemoryEngine } from '../../src/core/engine';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MAX_FIELD_CHARS } from '../../src/core/model/records';
import { clipRedacted } from '../../src/core/capture/redact';
import { parseUnifiedDiff } from '../../src/core/retrieve/diffText';
import { redactProblem } from '../../src/extension/capture/observationBuilder';

process.env.LANCEDB_LOG ??= 'error';

const T0 = 1_700_000_000;
const b64 = (v: string): string => Buffer.from(v).toString('base64');


/** The needles found under `dir`, each with the files that hold it. */
function leaks(dir: string, needles: Record<string, string>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, needle] of Object.entries(needles)) {
    const files = filesContaining(dir, needle);
    if (files.length > 0) out[name] = files;
  }
  return out;
}

/** A Kubernetes Secret whose kind line is far (more than git's or the edit's context) above its data. */
function secretManifest(value: string): string {
  return ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: billing', '  namespace: prod', '  labels:', '    app: billing', '    tier: backend', 'type: Opaque', 'data:', '  REGION: ZXUtd2VzdC0x', `  APP_VALUE: ${value}`, ''].join('\n');
}

/** A Terraform variable whose name is more than three lines above its default. */
function terraformVariable(value: string): string {
  return ['variable "api_token" {', '  description = "Token the app calls the billing API with"', '  type        = string', '  nullable    = false', `  default     = "${value}"`, '  sensitive   = true', '}', ''].join('\n');
}

describe('redaction on the capture paths', function () {
  this.timeout(180_000);

  describe('cutting redacted text', () => {
    it('cuts before a [REDACTED] marker rather than inside it, and keeps short text as it is', () => {
      const text = `${'a'.repeat(75)} ${REDACTED} tail`;
      assert.equal(clipRedacted(text, 81, '…'), `${'a'.repeat(75)} …`);
      assert.equal(clipRedacted(text, 200, '…'), text);
      assert.equal(clipRedacted(`x${REDACTED}`, 5), 'x');
    });

    it("a failing test's message is redacted before its 300-character cut (the cut falls inside the key)", () => {
      const key = 'sk_live_Zq9Ab3De6Gh9Jk2Mn5Pq8StUv';
      const line = `PushError [ERR_PUSH]: ${'registry refused the upload '.repeat(12)}`;
      const message = `${line.slice(0, 278)} ${key} while pushing`;
      assert.equal(message.indexOf(key) + 8 + 12, 299, 'the old cut kept 12 characters after sk_live_');
      assert.equal(redact(message.slice(0, 299)), message.slice(0, 299), 'control: the cut key alone is no secret to the rules');
      const f = firstFailingTest(` FAIL  src/deploy.test.ts\n  ● deploy › pushes the image\n\n    ${message}\n\n      at Object.<anonymous>`);
      assert.equal(f?.name, 'deploy › pushes the image');
      assert.ok(f?.message && !f.message.includes('Zq9Ab3De6Gh9'), f?.message ?? '');
      assert.ok(f.message.length <= 300 && f.message.endsWith('…') && !f.message.includes('[REDAC…'), f.message);
    });
  });

  describe('the hunk header of an edit', () => {
    it('is no line of base64 alone (a key body line no rule saw as one)', () => {
      const before = ['function load() {', '  return read(`', 'Zq9LoneBase64LineXk2Lm7Pq==', '`);', '  const debug = false;', '}', ''].join('\n');
      const hunks = editHunks(before, before.replace('debug = false', 'debug = true'));
      assert.equal(hunks.length, 1);
      assert.equal(hunks[0].header, 'function load() {');
    });

    it('is read from the file redacted as a whole: a private key above the change gives none of its lines', () => {
      const key = ['export const KEY = `-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'QyNTUxOQAAACBZq9OpenSshBodyLineTwoAbCdEfGhIjKlMnOpQrStUvWxYzAAAAJgAAAAA', 'Zq9ShortEnd9', '-----END OPENSSH PRIVATE KEY-----`;', ''];
      const before = [...key, 'export const debug = false;', ''].join('\n');
      const c = describeEdit('src/keys.ts', before, before.replace('debug = false', 'debug = true'));
      assert.ok(c.narrative?.includes('debug = true'), 'control: the change is described');
      assert.ok(!/Zq9ShortEnd9|Zq9OpenSsh|b3BlbnNzaC1/.test(JSON.stringify(c)), JSON.stringify(c));
    });
  });

  describe('the extension', () => {
    let root: string;
    let ws: string;
    let h: Harness | undefined;

    beforeEach(() => {
      root = tmp('cm-redcap-');
      ws = path.join(root, 'billing');
      makeRepo(ws, { 'src/app.ts': 'export const app = 1;\n', 'src/db.ts': 'export const db = 1;\n' });
    });
    afterEach(async () => {
      await h?.dispose();
      h = undefined;
      fs.rmSync(root, { recursive: true, force: true });
    });

    it("keeps no piece of a token that a terminal command's 80-character title cut falls inside", async () => {
      h = await new Harness({ folders: [ws] }).start();
      const token = 'glpat-Zq9Ab3De6Gh9Jk2Mn5Pq8St';
      const head = 'echo ';
      const tail = ' | docker login registry.gitlab.com -u ci-bot --password-stdin';
      // The title's cut keeps 'glpat-' and 14 characters (the rule wants 20).
      const command = `${'cd /srv/billing && '.repeat(3).slice(0, 80 - head.length - 6 - 14)}${head}${token}${tail}`;
      assert.equal(command.indexOf(token) + 6 + 14, 80);
      assert.equal(redact(command.slice(0, 80)), command.slice(0, 80), 'control: the cut token alone is no secret to the rules');
      await runInTerminal(h, command, ws, 7101);
      await h.flush();
      const obs = await h.observations(await h.project());
      const terminal = obs.find((o) => o.type === 'terminal');
      assert.ok(terminal, 'control: the command is stored');
      assert.match(terminal.title ?? '', /^`.*` succeeded$/);
      assert.ok(!/\[REDAC(?!TED\])/.test(terminal.title ?? ''), `no marker is cut: ${terminal.title}`);
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { token: 'Zq9Ab3De6Gh9Jk' }), {});
    });

    it("keeps no piece of a token that a terminal command's 300-character cut falls inside", async () => {
      h = await new Harness({ folders: [ws] }).start();
      const token = 'AKIAZQ9AB3DE6GH9JK2M';
      const head = 'printf "%s" "$(date)" | tee -a /var/log/deploy/billing.log >/dev/null && ';
      const pad = 'test -d /srv/billing/releases && ';
      let command = head;
      while (command.length + pad.length < 300 - 'echo '.length - 14) command += pad;
      command += ' '.repeat(300 - 'echo '.length - 14 - command.length);
      command += `echo ${token} | aws-vault add billing --stdin`;
      // The cut keeps the key's first 14 characters (the rule wants 20).
      assert.equal(command.indexOf(token) + 14, 300);
      assert.equal(redact(command.slice(0, 300)), command.slice(0, 300), 'control: the cut token alone is no secret to the rules');
      await runInTerminal(h, command, ws, 7102);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'terminal'), 'control: the command is stored');
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { token: 'AKIAZQ9AB3DE6G' }), {});
    });

    it("keeps no piece of a key that a failing test's 300-character message cut falls inside", async () => {
      h = await new Harness({ folders: [ws] }).start();
      const key = 'sk_live_Zq9Ab3De6Gh9Jk2Mn5Pq8StUv';
      const message = `${`PushError [ERR_PUSH]: ${'registry refused the upload '.repeat(12)}`.slice(0, 278)} ${key} while pushing`;
      const output = ` FAIL  src/deploy.test.ts\n  ● deploy › pushes the image\n\n    ${message}\n\n      at Object.<anonymous> (src/deploy.test.ts:9:5)\n`;
      await runInTerminal(h, 'npx jest src/deploy.test.ts', ws, 7103, 1, output);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'terminal' && /pushes the image/.test(JSON.stringify(o))), 'control: the failing test is recorded');
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { key: 'Zq9Ab3De6Gh9' }), {});
    });

    it("redacts a commit's message whole: a private key opened in the subject leaves none of its body", async () => {
      h = await new Harness({ folders: [ws] }).start();
      fs.writeFileSync(path.join(ws, 'src/app.ts'), 'export const app = 2;\n');
      git(ws, 'add', '-A');
      git(ws, 'commit', '-q', '-m', 'add the deploy key -----BEGIN OPENSSH PRIVATE KEY-----', '-m', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUZq9CommitBodyKeyLine\nZq9CommitBodyLastLine==\n-----END OPENSSH PRIVATE KEY-----');
      h.gitRefresh();
      await h.flush();
      fs.writeFileSync(path.join(ws, 'src/db.ts'), 'export const db = 2;\n');
      git(ws, 'add', '-A');
      git(ws, 'commit', '-q', '-m', 'Raise the pool size', '-m', 'The pool ran dry under the nightly export.');
      h.gitRefresh();
      await h.flush();
      const obs = await h.observations(await h.project());
      const commits = obs.filter((o) => o.type === 'commit');
      assert.ok(commits.some((o) => o.title === 'add the deploy key [REDACTED]'), JSON.stringify(commits.map((o) => o.title)));
      // Control: an ordinary commit keeps its subject and its body.
      assert.ok(commits.some((o) => o.title === 'Raise the pool size' && o.narrative === 'The pool ran dry under the nightly export.'), JSON.stringify(commits.map((o) => [o.title, o.narrative])));
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { body: 'Zq9CommitBody', first: 'b3BlbnNzaC1rZXktdjE' }), {});
    });

    it('stores no line of a private key above an edit (the hunk header), in a template string', async () => {
      const key = ['export const KEY = `-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'QyNTUxOQAAACBZq9OpenSshBodyLineTwoAbCdEfGhIjKlMnOpQrStUvWxYzAAAAJgAAAAA', 'Zq9ShortEnd9==', '-----END OPENSSH PRIVATE KEY-----`;', ''];
      fs.writeFileSync(path.join(ws, 'src/keys.ts'), [...key, 'export const debug = false;', ''].join('\n'));
      h = await new Harness({ folders: [ws] }).start();
      const doc = h.open(path.join(ws, 'src/keys.ts'));
      h.type(doc, doc.text.replace('debug = false', 'debug = true'));
      h.save(doc);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'edit' && /debug = true/.test(o.narrative ?? '')), 'control: the edit is stored');
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { tail: 'Zq9ShortEnd9', body: 'Zq9OpenSshBody' }), {});
    });

    it('stores neither value of a Kubernetes Secret data entry an edit rotates (kind: Secret ten lines above)', async () => {
      const oldValue = b64('Zq9PlainRotatedOldXk2');
      const newValue = b64('Zq9PlainRotatedNewXk3');
      fs.mkdirSync(path.join(ws, 'deploy'), { recursive: true });
      fs.writeFileSync(path.join(ws, 'deploy/billing-secret.yaml'), secretManifest(oldValue));
      fs.writeFileSync(path.join(ws, 'deploy/billing-config.yaml'), ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: billing', '  labels:', '    app: billing', '    tier: backend', 'data:', '  REGION: eu-west-1', '  LOG_LEVEL: info', ''].join('\n'));
      h = await new Harness({ folders: [ws] }).start();
      const doc = h.open(path.join(ws, 'deploy/billing-secret.yaml'));
      h.type(doc, secretManifest(newValue));
      h.save(doc);
      // Control: a ConfigMap's data is no secret, and stays.
      const config = h.open(path.join(ws, 'deploy/billing-config.yaml'));
      h.type(config, config.text.replace('LOG_LEVEL: info', 'LOG_LEVEL: verbosezq9'));
      h.save(config);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'edit' && /billing-secret\.yaml/.test(o.files_modified ?? '') && /APP_VALUE: \[REDACTED\]/.test(o.narrative ?? '')), JSON.stringify(obs.map((o) => o.narrative)));
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { oldValue: oldValue.slice(4, 24), newValue: newValue.slice(4, 24) }), {});
      assert.ok(filesContaining(h.storeDir, 'verbosezq9').length > 0, 'control: the ConfigMap edit is stored');
    });

    it("stores neither the old nor the new default of a Terraform secret variable an edit changes", async () => {
      fs.mkdirSync(path.join(ws, 'infra'), { recursive: true });
      fs.writeFileSync(path.join(ws, 'infra/variables.tf'), terraformVariable('Zq9TfEditOldXk2'));
      h = await new Harness({ folders: [ws] }).start();
      const doc = h.open(path.join(ws, 'infra/variables.tf'));
      h.type(doc, terraformVariable('Zq9TfEditNewXk3'));
      h.save(doc);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'edit' && /variables\.tf/.test(o.files_modified ?? '')), 'control: the edit is stored');
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { old: 'Zq9TfEditOldXk2', new: 'Zq9TfEditNewXk3' }), {});
    });

    it("takes out of a linter's message the secret it quotes from the edited line (introduced, and cut at the message's limit)", async () => {
      const secret = 'Zq9LintQuotedXk2Lm7Pq4';
      const cutSecret = 'Zq9LintCutValueXk2Lm7Pq4Rt8';
      assert.ok(!redact(`const dbPassword = '${secret}';`).includes(secret), 'control: the code line is redacted');
      h = await new Harness({ folders: [ws] }).start();
      const file = h.open(path.join(ws, 'src/db.ts'));
      let linted = false;
      // Neither message says it found a secret: only the line's redaction tells what the quote is.
      const long = `${`Unexpected string literal in a module scope, move it into the configuration layer of the service and read it at start-up instead (see the team's notes on literals, and the checklist)`.slice(0, 184)}'`;
      h.stub.languages.getDiagnostics = (uri: Uri) =>
        linted && uri.toString() === file.uri.toString()
          ? [
              { severity: 1, message: `Unexpected string literal '${secret}' (local/no-literals)`, range: { start: { line: 1, character: 0 }, end: { line: 1, character: 10 } } },
              { severity: 1, message: `${long}${cutSecret}' (local/no-literals)`, range: { start: { line: 2, character: 0 }, end: { line: 2, character: 10 } } },
            ]
          : [];
      assert.ok(long.length < 200 && long.length + cutSecret.length > 200, 'the message is cut inside the quoted secret');
      h.type(file, `export const db = 1;\nconst dbPassword = '${secret}';\nconst db_password_fallback = '${cutSecret}';\n`);
      linted = true;
      h.save(file);
      await h.flush();
      const obs = await h.observations(await h.project());
      const facts = obs.filter((o) => o.type === 'edit').map((o) => o.facts ?? '');
      assert.ok(facts.some((f) => /problem introduced in src\/db\.ts: Unexpected string literal '\[REDACTED\]'/.test(f)), JSON.stringify(facts));
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { secret: secret.slice(0, 12), cut: cutSecret.slice(0, 10) }), {});
    });

    it("takes out of a cleared problem's message the secret it quoted from a removed line", async () => {
      const secret = 'Zq9LintClearedXk2Lm7Pq4';
      fs.writeFileSync(path.join(ws, 'src/db.ts'), `export const db = 1;\nconst apiSecret = "${secret}";\n`);
      h = await new Harness({ folders: [ws] }).start();
      const file = h.open(path.join(ws, 'src/db.ts'));
      let holds = true;
      h.stub.languages.getDiagnostics = (uri: Uri) =>
        holds && uri.toString() === file.uri.toString() ? [{ severity: 1, message: `Literal "${secret}" should come from the environment`, range: { start: { line: 1, character: 0 }, end: { line: 1, character: 10 } } }] : [];
      h.type(file, 'export const db = 1;\nconst apiSecret = process.env.API_SECRET;\n');
      holds = false;
      h.save(file);
      await h.flush();
      const obs = await h.observations(await h.project());
      const facts = obs.filter((o) => o.type === 'edit').map((o) => o.facts ?? '');
      assert.ok(facts.some((f) => /problem cleared in src\/db\.ts: Literal \\?"\[REDACTED\]\\?"/.test(f)), JSON.stringify(facts));
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { secret: secret.slice(0, 12) }), {});
    });

    it("redacts a problem's message before its 200-character cut", async () => {
      const token = 'ghp_Zq9Ab3De6Gh9Jk2Mn5Pq8StUv1Wx4Yz7Ab3';
      const head = `Request to the package registry failed; the credentials in the environment were refused by the server. Check the value in the environment, rotate it where it is kept, and retry the request with: npm login `;
      const message = `${head.slice(0, 200 - 4 - 20 - 1)} ${token} --registry https://npm.pkg.github.com`;
      assert.equal(message.indexOf(token) + 4 + 20, 200);
      assert.equal(redact(message.slice(0, 200)), message.slice(0, 200), 'control: the cut token alone is no secret to the rules');
      h = await new Harness({ folders: [ws] }).start();
      const file = h.open(path.join(ws, 'src/app.ts'));
      let linted = false;
      h.stub.languages.getDiagnostics = (uri: Uri) => (linted && uri.toString() === file.uri.toString() ? [{ severity: 0, message, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } } }] : []);
      h.type(file, 'export const app = 3;\n');
      linted = true;
      h.save(file);
      await h.flush();
      const obs = await h.observations(await h.project());
      assert.ok(obs.some((o) => o.type === 'edit' && /problem introduced/.test(o.facts ?? '')), 'control: the problem is recorded');
      await h.engine.close();
      assert.deepEqual(leaks(h.storeDir, { token: 'Zq9Ab3De6Gh9Jk2' }), {});
    });
  });

  describe("a problem's message", () => {
    it('loses what the edited lines held as secrets, whole or in pieces of 8 or more, and keeps the rest', () => {
      assert.equal(redactProblem(`Found a string with entropy 4.7 : "Zq9AbcDefGhi" (line 2)`, ['Zq9AbcDefGhi']), `Found a string with entropy 4.7 : "${REDACTED}" (line 2)`);
      assert.equal(redactProblem(`bad literal 'Zq9AbcDe (line 2)`, ['Zq9AbcDefGhi']), `bad literal '${REDACTED} (line 2)`);
      assert.equal(redactProblem(`'pw42' is not allowed; 'pw421' is (line 3)`, ['pw42']), `'${REDACTED}' is not allowed; 'pw421' is (line 3)`);
      // A message that says it found a secret loses its quote, whether or not a line showed it.
      assert.equal(redactProblem(`Found a string with entropy 4.9 : "Zq9NotOnALine77" (line 4)`, []), `Found a string with entropy 4.9 : "${REDACTED}" (line 4)`);
      assert.equal(redactProblem(`Property 'tokenizerOptions' does not exist on type 'Config'. (line 5)`, ['Zq9AbcDefGhi']), `Property 'tokenizerOptions' does not exist on type 'Config'. (line 5)`);
    });
  });

  describe('git import', () => {
    let repo: string | undefined;
    let storeDir: string;
    let engine: MemoryEngine;
    const scope = { project: 'redcap' };

    beforeEach(async () => {
      storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-redcapgit-'));
      engine = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    });
    afterEach(async () => {
      await engine.close().catch(() => undefined);
      fs.rmSync(storeDir, { recursive: true, force: true });
      if (repo) fs.rmSync(repo, { recursive: true, force: true });
      repo = undefined;
    });

    it("stores no line of a private key that is git's hunk header (its short last line)", async () => {
      const key = ['export const KEY = `-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'QyNTUxOQAAACBZq9OpenSshBodyLineTwoAbCdEfGhIjKlMnOpQrStUvWxYzAAAAJgAAAAA', 'Zq9GitShortEnd==', '-----END OPENSSH PRIVATE KEY-----`;', ''];
      ({ repo } = makeHistory([
        { subject: 'Add the deploy key', files: { 'src/keys.ts': [...key, 'export const debug = false;', ''].join('\n') }, time: T0 },
        { subject: 'Turn debugging on', files: { 'src/keys.ts': [...key, 'export const debug = true;', ''].join('\n') }, time: T0 + 600 },
      ]));
      // Control: git gives the key's last line as the second commit's hunk header.
      const diff = gitIn(repo, ['log', '-1', '-p', '-U1', '--format=']);
      assert.match(diff, /@@ [^@]+ @@ Zq9GitShortEnd==/);
      assert.deepEqual(parseUnifiedDiff(diff)[0].hunkContexts, []);
      await importGitHistory(engine, repo, { scope, documents: false });
      await engine.close();
      assert.ok(filesContaining(storeDir, 'Turn debugging on').length > 0, 'control: the commit is stored');
      assert.deepEqual(leaks(storeDir, { tail: 'Zq9GitShortEnd' }), {});
    });

    it('stores no value of a Kubernetes Secret that later commits rotate (only its data lines in their diffs)', async () => {
      const values = ['Zq9GitRotatedOneXk2', 'Zq9GitRotatedTwoXk3', 'Zq9GitRotatedThreeXk4'].map(b64);
      ({ repo } = makeHistory([
        { subject: 'Add the billing secret', files: { 'deploy/billing-secret.yaml': secretManifest(values[0]) }, time: T0 },
        { subject: 'Add the billing config', files: { 'deploy/billing-config.yaml': ['kind: ConfigMap', 'metadata:', '  name: billing', 'data:', '  REGION: eu-west-1', '  LOG_LEVEL: info', ''].join('\n') }, time: T0 + 300 },
        { subject: 'Rotate the billing value', files: { 'deploy/billing-secret.yaml': secretManifest(values[1]) }, time: T0 + 600 },
        { subject: 'Rotate the billing value again', files: { 'deploy/billing-secret.yaml': secretManifest(values[2]), 'deploy/billing-config.yaml': ['kind: ConfigMap', 'metadata:', '  name: billing', 'data:', '  REGION: eu-west-1', '  LOG_LEVEL: verbosezq9', ''].join('\n') }, time: T0 + 900 },
      ]));
      // Control: the rotation's diff does not show the kind line.
      assert.ok(!/kind: Secret/.test(gitIn(repo, ['log', '-1', '-p', '-U1', '--format=', '--', 'deploy/billing-secret.yaml'])));
      await importGitHistory(engine, repo, { scope, documents: false });
      await engine.close();
      assert.ok(filesContaining(storeDir, 'Rotate the billing value again').length > 0, 'control: the commits are stored');
      assert.ok(filesContaining(storeDir, 'verbosezq9').length > 0, "control: a ConfigMap's data is kept");
      assert.deepEqual(leaks(storeDir, Object.fromEntries(values.map((v, i) => [`value${i}`, v.slice(4, 24)]))), {});
    });

    it('stores neither the old nor the new default of a Terraform secret variable (its name out of the diff)', async () => {
      ({ repo } = makeHistory([
        { subject: 'Add the billing variables', files: { 'infra/variables.tf': terraformVariable('Zq9TfGitOldXk2') }, time: T0 },
        { subject: 'Change the billing token default', files: { 'infra/variables.tf': terraformVariable('Zq9TfGitNewXk3') }, time: T0 + 600 },
      ]));
      await importGitHistory(engine, repo, { scope, documents: false });
      await engine.close();
      assert.ok(filesContaining(storeDir, 'Change the billing token default').length > 0, 'control: the commits are stored');
      assert.deepEqual(leaks(storeDir, { old: 'Zq9TfGitOldXk2', new: 'Zq9TfGitNewXk3' }), {});
    });

    it("redacts a commit message before its cut at the field's limit (the cut falls inside a token)", async () => {
      ({ repo } = makeHistory([{ subject: 'Start', files: { 'a.txt': 'a\n' }, time: T0 }]));
      const token = 'ghp_Zq9Ab3De6Gh9Jk2Mn5Pq8StUv1Wx4Yz7Ab3';
      const prefix = 'Import the vendor notes\n\n';
      const filler = `${'vendor notes follow. '.repeat(Math.ceil(MAX_FIELD_CHARS / 21)).slice(0, MAX_FIELD_CHARS - prefix.length - 4 - 16 - 1)} `;
      const message = `${prefix}${filler}${token} and more notes after it\n`;
      assert.equal(message.indexOf(token) + 4 + 16, MAX_FIELD_CHARS, 'the old cut kept 16 characters after ghp_');
      assert.ok(redact(message).includes(REDACTED) && !redact(message).includes('Zq9Ab3De6Gh9'), 'control: the whole message is redacted');
      const file = path.join(repo, '..', `${path.basename(repo)}-message.txt`);
      fs.writeFileSync(file, message);
      try {
        fs.writeFileSync(path.join(repo, 'a.txt'), 'b\n');
        gitIn(repo, ['add', '-A']);
        gitIn(repo, ['commit', '-q', '-F', file], { GIT_AUTHOR_DATE: `${T0 + 60} +0000`, GIT_COMMITTER_DATE: `${T0 + 60} +0000` });
      } finally {
        fs.rmSync(file, { force: true });
      }
      commitAll(repo, { subject: 'After', files: { 'a.txt': 'c\n' }, time: T0 + 120 });
      await importGitHistory(engine, repo, { scope, documents: false });
      await engine.close();
      assert.ok(filesContaining(storeDir, 'Import the vendor notes').length > 0, 'control: the commit is stored');
      assert.deepEqual(leaks(storeDir, { token: 'Zq9Ab3De6Gh9Jk2M' }), {});
    });
  });

  describe('storing an observation', () => {
    let storeDir: string;
    let engine: MemoryEngine;

    beforeEach(async () => {
      storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-redcapstore-'));
      engine = await MemoryEngine.open({ storeUri: storeDir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
    });
    afterEach(async () => {
      await engine.close().catch(() => undefined);
      fs.rmSync(storeDir, { recursive: true, force: true });
    });

    it('redacts every default under one Terraform header (a diff gives the old and the new)', async () => {
      const text = 'variable "db_password" {\n  default     = "Zq9StoreNewXk3"\n  default     = "Zq9StoreOldXk2"\n}';
      assert.equal(redact(text), `variable "db_password" {\n  default     = "${REDACTED}"\n  default     = "${REDACTED}"\n}`);
      await engine.observe([{ type: 'commit', title: 'Change the database password default', narrative: text, search_extra: text, facts: [text] }], { project: 'redcap' });
      await engine.close();
      assert.ok(filesContaining(storeDir, 'Change the database password default').length > 0, 'control: the observation is stored');
      assert.deepEqual(leaks(storeDir, { new: 'Zq9StoreNewXk3', old: 'Zq9StoreOldXk2' }), {});
    });
  });
});
