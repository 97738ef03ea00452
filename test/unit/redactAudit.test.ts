// Redaction of secrets written the way formatters and tools lay them out (a Python value wrapped
// in parentheses or split into literals, an OpenVPN static key), and of the ordinary code that
// only names a secret (identifiers, references, types, enum values), which stays as written.
// Every secret-looking value here is built by concatenation, so no scanner takes this file for one.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { REDACTED, redact, redactLines, secretKinds } from '../../src/core/capture/redact';
import type { MemoryEngine } from '../../src/core/engine';
import { Harness, makeRepo, tmp } from './captureHarness';
import { filesContaining } from './diskFixture';
import { commitAll, git } from './gitImportFixture';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';
import { MB, megabyteOf, redactsHostileFast } from './redactFixture';

process.env.LANCEDB_LOG ??= 'error';

const c = (...parts: string[]): string => parts.join('');
/** A secret-looking value unique to its tag. */
const v = (tag: string): string => c('Zq9', tag, 'x7K2mP4vR8tW1yB6');

/** An OpenVPN static key's 16 lines of 32 hex digits, as openvpn --genkey writes them, each unique to `tag` (two hex digits). */
function staticKeyLines(tag: string): string[] {
  return Array.from({ length: 16 }, (_, i) => c('9f3a', tag, i.toString(16).padStart(2, '0'), 'c0ffee7d5b1e4a2f8c6d0b3e9a7f1c5d').slice(0, 32));
}
const STATIC_KEY_BEGIN = c('-----BEGIN OpenVPN ', 'Static key V1-----');
const STATIC_KEY_END = c('-----END OpenVPN ', 'Static key V1-----');

/** [label, secret bytes, file content]: black/ruff-formatted Python, implicit concatenation, shells. */
function wrappedSecrets(tag: string): Array<[string, string, string]> {
  return [
    ['python value black wrapped in parentheses', v(`${tag}PAREN`), `API_KEY = (\n    "${v(`${tag}PAREN`)}"\n)\n`],
    ['python keyword argument wrapped in parentheses', v(`${tag}KWARG`), `client = Client(\n    api_key=(\n        "${v(`${tag}KWARG`)}"\n    ),\n)\n`],
    ['python implicit concatenation, first part', v(`${tag}IMPA`), `SECRET_KEY = (\n    "${v(`${tag}IMPA`)}"\n    "${v(`${tag}IMPL`)}"\n)\n`],
    ['python implicit concatenation, second part', v(`${tag}IMPL`), `SECRET_KEY = (\n    "${v(`${tag}IMPA`)}"\n    "${v(`${tag}IMPL`)}"\n)\n`],
    ['python backslash continuation, second part', v(`${tag}BSL`), `DB_PASSWORD = "${v(`${tag}BSA`)}" \\\n    "${v(`${tag}BSL`)}"\n`],
    ['windows setx', v(`${tag}SETX`), `setx API_KEY ${v(`${tag}SETX`)}\n`],
    ['fish set -x', v(`${tag}FISH`), `set -x API_KEY ${v(`${tag}FISH`)}\n`],
  ];
}

describe('redaction: secrets a formatter wraps or splits over lines', () => {
  it('redacts a Python value in parentheses, a keyword argument in parentheses, and every part of a value split into literals', () => {
    for (const [label, secret, content] of wrappedSecrets('U')) {
      assert.ok(!redact(content).includes(secret), `${label}: ${redact(content)}`);
      assert.ok(!redactLines(content.split('\n')).join('\n').includes(secret), `${label} (as lines)`);
    }
    assert.equal(redact(`API_KEY = (\n    "${v('A')}"\n)`), `API_KEY = (\n    "${REDACTED}"\n)`);
    assert.equal(redact(`SECRET_KEY = "${v('B')}" "${v('C')}"`), `SECRET_KEY = "${REDACTED}" "${REDACTED}"`);
    assert.deepEqual(redactLines(['SECRET_KEY = (', `    "${v('D')}"`, `    "${v('E')}"`, ')']), ['SECRET_KEY = (', `    "${REDACTED}"`, `    "${REDACTED}"`, ')']);
  });

  it('redacts both sides of a wrapped value in a pasted diff, each line after its mark', () => {
    const diff = ['@@ -1,4 +1,4 @@', ' SECRET_KEY = (', `-    "${v('OldA')}"`, `-    "${v('OldB')}"`, `+    "${v('NewA')}"`, `+    "${v('NewB')}"`, ' )'].join('\n');
    const out = redact(diff);
    assert.deepEqual(
      ['OldA', 'OldB', 'NewA', 'NewB'].filter((tag) => out.includes(v(tag))),
      [],
    );
    assert.equal(redact(`+API_KEY = (\n+    "${v('Added')}"\n+)`), `+API_KEY = (\n+    "${REDACTED}"\n+)`);
  });

  it('keeps a docstring below an assignment out of its value', () => {
    const doc = '"""The key the client signs with."""';
    assert.equal(redact(`SIGNING_KEY = "${v('F')}"\n${doc}`), `SIGNING_KEY = "${REDACTED}"\n${doc}`);
  });

  describe('through capture, to the store files', function () {
    this.timeout(120_000);
    const scope = { project: 'github.com/acme/split' };

    it('git import of a commit adding them leaves no secret in the store files', async () => {
      const { engine, dir } = await openTestEngine();
      const repo = tempDir('split-repo');
      const list = wrappedSecrets('G');
      try {
        git(repo, ['init', '-q', '-b', 'main']);
        git(repo, ['config', 'commit.gpgsign', 'false']);
        commitAll(repo, { subject: 'Initial', files: { 'README.md': '# app\n' }, time: 1_700_000_000 });
        const files: Record<string, string> = {};
        list.forEach(([label, , content], i) => (files[label.startsWith('windows') ? `scripts/setup${i}.bat` : label.startsWith('fish') ? `scripts/config${i}.fish` : `app/settings${i}.py`] = content));
        commitAll(repo, { subject: 'Add settings', files, time: 1_700_000_100 });
        await importGitHistory(engine, repo, { scope });
        await engine.flush();
      } finally {
        await engine.close();
        removeDir(repo);
      }
      const found = list.filter(([, needle]) => filesContaining(dir, needle).length > 0).map(([label]) => label);
      removeDir(dir);
      assert.deepEqual(found, []);
    });

    it('observe of a narrative quoting them leaves no secret in the store files', async () => {
      const { engine, dir } = await openTestEngine();
      const list = wrappedSecrets('O');
      try {
        await engine.observe(list.map(([label, , content]) => ({ type: 'note', title: `config ${label}`, narrative: `We changed the settings:\n${content}` })), scope);
        await engine.flush();
      } finally {
        await engine.close();
      }
      const found = list.filter(([, needle]) => filesContaining(dir, needle).length > 0).map(([label]) => label);
      removeDir(dir);
      assert.deepEqual(found, []);
    });

    it('editor capture of an edit typing a black-wrapped Python secret leaves no secret in the store files', async () => {
      const root = tmp('cm-split-');
      const ws = path.join(root, 'app');
      makeRepo(ws, { 'app/settings.py': 'DEBUG = False\n' });
      let h: Harness | undefined;
      const secret = v('EDPAREN');
      const second = v('EDIMPL');
      try {
        h = await new Harness({ folders: [ws] }).start();
        const doc = h.open(path.join(ws, 'app/settings.py'));
        h.type(doc, `DEBUG = True\nAPI_KEY = (\n    "${secret}"\n)\nSECRET_KEY = (\n    "${v('EDIMPA')}"\n    "${second}"\n)\n`);
        h.save(doc);
        await h.flush();
        const obs = await h.observations(await h.project());
        assert.ok(obs.some((o) => o.type === 'edit'), 'control: the edit is stored');
        await h.engine.close();
        const found = [secret, second].filter((n) => filesContaining(h!.storeDir, n).length > 0);
        assert.deepEqual(found, []);
      } finally {
        await h?.dispose();
        fs.rmSync(root, { recursive: true, force: true });
      }
    });

    describe('a private key with Windows (CRLF) line endings', () => {
      const tail = c('Zq9CRLF', 'lastLineTail8w==');
      const block =
        [
          c('-----BEGIN ', 'RSA PRIVATE KEY-----'),
          c('MIIEowIBAAKCAQEAx9', 'Zq9CRLFbodyOneAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
          c('Zq9CRLFbodyTwo', 'BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB'),
          tail,
          c('-----END ', 'RSA PRIVATE KEY-----'),
        ].join('\r\n') + '\r\n';
      const lines = ['Zq9CRLFbodyOne', 'Zq9CRLFbodyTwo', tail];

      it('git import of a file holding it leaves no line of the key in the store files', async () => {
        const { engine, dir } = await openTestEngine();
        const repo = tempDir('crlf-repo');
        try {
          git(repo, ['init', '-q', '-b', 'main']);
          git(repo, ['config', 'commit.gpgsign', 'false']);
          git(repo, ['config', 'core.autocrlf', 'false']);
          commitAll(repo, { subject: 'Initial', files: { 'README.md': '# app\n' }, time: 1_700_000_000 });
          commitAll(repo, { subject: 'Add the deploy key fixture', files: { 'config/deploy_key.txt': block }, time: 1_700_000_100 });
          await importGitHistory(engine, repo, { scope });
          await engine.flush();
        } finally {
          await engine.close();
          removeDir(repo);
        }
        const found = lines.filter((n) => filesContaining(dir, n).length > 0);
        removeDir(dir);
        assert.deepEqual(found, []);
      });

      it('observe of a narrative quoting it leaves no line of the key in the store files', async () => {
        const { engine, dir } = await openTestEngine();
        try {
          await engine.observe([{ type: 'note', title: 'pasted key', narrative: `the old key was\r\n${block}` }], scope);
          await engine.flush();
        } finally {
          await engine.close();
        }
        const found = lines.filter((n) => filesContaining(dir, n).length > 0);
        removeDir(dir);
        assert.deepEqual(found, []);
      });
    });
  });
});

describe('redaction: OpenVPN keys', () => {
  it('redacts a static key block whole, as text and as lines, and a tls-crypt-v2 key', () => {
    const keyLines = staticKeyLines('aa');
    const block = [STATIC_KEY_BEGIN, ...keyLines, STATIC_KEY_END].join('\n');
    assert.equal(redact(`the key:\n${block}\nremote vpn.example.com 1194`), `the key:\n${REDACTED}\nremote vpn.example.com 1194`);
    assert.deepEqual(redactLines(['<tls-auth>', ...block.split('\n'), '</tls-auth>', 'key-direction 1']), ['<tls-auth>', REDACTED, '</tls-auth>', 'key-direction 1']);
    assert.deepEqual(secretKinds(block), ['private key']);
    // A key cut short (a field's limit) goes to where its body stops.
    assert.equal(redact([STATIC_KEY_BEGIN, ...keyLines.slice(0, 5)].join('\n')), REDACTED);
    const v2 = [c('-----BEGIN OpenVPN ', 'tls-crypt-v2 client key-----'), ...Array.from({ length: 3 }, (_, i) => c('Zq9TlsCryptV2', String(i), 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab')), c('-----END OpenVPN ', 'tls-crypt-v2 client key-----')].join('\n');
    assert.equal(redact(`<tls-crypt-v2>\n${v2}\n</tls-crypt-v2>`), `<tls-crypt-v2>\n${REDACTED}\n</tls-crypt-v2>`);
  });

  it('keeps prose and configuration that only name the key', () => {
    for (const text of ['generate it with openvpn --genkey secret ta.key', 'tls-crypt ta.key', 'The OpenVPN Static key V1 format is 2048 bits of hex.']) assert.equal(redact(text), text);
  });

  it('git import of a profile with an inline tls-crypt static key leaves no line of the key in the store files', async function () {
    this.timeout(120_000);
    const scope = { project: 'github.com/acme/infra' };
    const { engine, dir } = await openTestEngine();
    const repo = tempDir('ovpn-repo');
    const keyLines = staticKeyLines('bb');
    const profile = ['client', 'dev tun', 'proto udp', 'remote vpn.example.com 1194', '<tls-crypt>', STATIC_KEY_BEGIN, ...keyLines, STATIC_KEY_END, '</tls-crypt>', ''].join('\n');
    try {
      git(repo, ['init', '-q', '-b', 'main']);
      git(repo, ['config', 'commit.gpgsign', 'false']);
      commitAll(repo, { subject: 'Initial', files: { 'README.md': '# infra\n' }, time: 1_700_000_000 });
      commitAll(repo, { subject: 'Add the VPN client profile', files: { 'vpn/client.ovpn': profile }, time: 1_700_000_100 });
      await importGitHistory(engine, repo, { scope });
      await engine.observe([{ type: 'note', title: 'vpn profile', narrative: `pasted profile:\n${profile}` }], scope);
      await engine.flush();
    } finally {
      await engine.close();
      removeDir(repo);
    }
    const found = keyLines.filter((n) => filesContaining(dir, n).length > 0);
    removeDir(dir);
    assert.deepEqual(found, []);
  });
});

describe('redaction keeps ordinary code that names a secret', () => {
  it('keeps commit SHAs, UUIDs, sha256 digests and ordinary identifiers', () => {
    const keep = [
      'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
      'node 123e4567-e89b-12d3-a456-426614174000',
      'image: node@sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4',
      'const passwordInput = document.getElementById("password-input");',
      'token = await fetchToken(user)',
      'const MAX_TOKENS = 4096;',
      'password: ${DB_PASSWORD}',
    ];
    assert.deepEqual(
      keep.filter((k) => redact(k) !== k),
      [],
    );
  });

  it('keeps an observation whose title is one long camelCase identifier (a test or function name)', async function () {
    this.timeout(120_000);
    const { engine, dir } = await openTestEngine();
    const titles = ['shouldReturnEmptyListWhenNoItemsExist404', 'refactorAuthenticationMiddlewareForV2Api', 'handleIncomingWebSocketMessageForChannel1'];
    let stored: string[] = [];
    try {
      const out = await (engine as MemoryEngine).observe(
        titles.map((title) => ({ type: 'test', title })),
        { project: 'acme/keeps' },
      );
      stored = (await engine.getObservations(out.map((o) => o.id), { project: 'acme/keeps' })).map((o) => o.title ?? '');
    } finally {
      await engine.close();
      removeDir(dir);
    }
    assert.deepEqual(stored, titles);
  });

  it('keeps a long identifier alone on a line of code, and a list of them, but not a line of a key', () => {
    const lines = ['render(', '  someVeryLongArgumentNameThatIsDescriptive1', ')'];
    assert.deepEqual(redactLines(lines), lines);
    const names = ['shouldReturnEmptyListWhenNoItemsExist404', 'shouldReturnTheCreatedItemWhenItIsValid201'];
    assert.deepEqual(redactLines(names), names);
    assert.equal(redact(names.join('\n')), names.join('\n'));
    const keyLine = c('    QyNTUxOQAAACB', 'Zq9ROTATEDkeyBodyLineTWOxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx');
    assert.equal(redact(keyLine), `    ${REDACTED}`);
    assert.deepEqual(redactLines([names[0], keyLine.trim()]), [REDACTED]);
  });

  it('keeps a quoted reference to an environment variable, as its unquoted form is (compose, shell), and a placeholder', () => {
    const keep = ['POSTGRES_PASSWORD: "${DB_PASSWORD}"', 'export PGPASSWORD="$DB_PASSWORD"', 'api_key = "${API_KEY}"', 'token = "<your-token>"', 'password = "%DB_PASSWORD%"'];
    assert.deepEqual(
      keep.map((k) => redact(k)),
      keep,
    );
  });

  it('keeps a header name or an endpoint URL under a secret-sounding name', () => {
    const keep = ['const apiKeyHeader = "x-api-key";', 'const tokenEndpoint = "https://oauth2.googleapis.com/token";', 'PASSWORD_FILE=/run/secrets/db_password'];
    assert.deepEqual(
      keep.map((k) => redact(k)),
      keep,
    );
  });

  it('keeps lines of ordinary TypeScript/JavaScript whose names mention a token, secret or pass (a diff, an edit)', () => {
    const keep = [
      'export type ProgressToken = string | number;',
      'function redactProblem(message: string, secrets: readonly string[]): string {',
      '  progressToken: messageId,',
      '  return { refresh_token: refreshToken, ...tokens };',
      'exports.tokenHandler = tokenHandler;',
      'const clientSecret = isPublicClient ? undefined : randomSecret();',
      'const secrets = content?.secrets ?? [];',
      "this.iconPath = new vscode.ThemeIcon(ok ? 'pass' : 'error');",
      "  EVENT_TEST_PASS: 'pass',",
      "  GRANT_TYPE_REFRESH_TOKEN: 'refresh_token',",
    ];
    const changed = redactLines(keep)
      .map((out, i) => [keep[i], out])
      .filter(([a, b]) => a !== b);
    assert.deepEqual(changed, []);
  });

  it('keeps lines of ordinary Python whose names mention a token or password (type hints, keyword arguments, calls)', () => {
    const keep = [
      'def _parse_requirement(tokenizer: Tokenizer) -> ParsedRequirement:',
      'def encode(text: str, tokenizer: PreTrainedTokenizer) -> list[int]:',
      '        password=password,',
      'password = password or ""',
      'username, password = split',
      'password = base64.b16encode(random_bytes[8:])',
      'MovedAttribute("HTTPPasswordMgr", "urllib2", "urllib.request"),',
    ];
    const changed = redactLines(keep)
      .map((out, i) => [keep[i], out])
      .filter(([a, b]) => a !== b);
    assert.deepEqual(changed, []);
  });

  it('keeps the words of prose naming a password option or a token', () => {
    const keep = ['information can be provided via the --username and --password options', 'There are two addition properties on every node and token: `start` and `end`.'];
    assert.deepEqual(
      keep.map((k) => redact(k)),
      keep,
    );
  });
});

describe('redaction: the same shapes holding a secret', () => {
  // A secret mixes digits into its letters; a password may be a plain word where nothing shows it is code.
  const cases: [string, string][] = [
    ['password = password', `password = ${REDACTED}`],
    ['password = letmein', `password = ${REDACTED}`],
    ['password: "hunter"', `password: "${REDACTED}"`],
    ['{password: letmein, user: bob}', `{password: ${REDACTED}, user: bob}`],
    ['Server=db;Password=letmein;', `Server=db;Password=${REDACTED};`],
    ['First, password=letmein', `First, password=${REDACTED}`],
    ['note, password = letmein', `note, password = ${REDACTED}`],
    [`password = ${v('Comma')},`, `password = ${REDACTED},`],
    ['password = Hunter,', `password = ${REDACTED},`],
    ['token = xQzvBnmKpLw,', `token = ${REDACTED},`],
    [`token: ${v('Union')} | other`, `token: ${REDACTED} | other`],
    [`password = "\${USER}${v('Ref')}"`, `password = "${REDACTED}"`],
    [`api_key = "$${v('Dollar')}"`, `api_key = "${REDACTED}"`],
    [`token = "<${v('Angle')}>"`, `token = "${REDACTED}"`],
    [`TOKEN_URL = "https://hooks.example.com/t/${v('Url')}"`, `TOKEN_URL = "${REDACTED}"`],
    [`tokenHeader = "${v('Header')}"`, `tokenHeader = "${REDACTED}"`],
    [`EVENT_TEST_PASS: '${c('pass', '2word')}'`, `EVENT_TEST_PASS: '${REDACTED}'`],
    [`ok ? 'x' : 'y'; password: '${c('hunter', '2')}'`, `ok ? 'x' : 'y'; password: '${REDACTED}'`],
    [`os.getenv("DB_PASSWORD", "${c('hunter', '2')}")`, `os.getenv("DB_PASSWORD", "${REDACTED}")`],
    [`setItem('Token', '${v('Item')}')`, `setItem('Token', '${REDACTED}')`],
    [`const token = \`${v('Tick')}\``, `const token = ${REDACTED}`],
    [`token: \`${v('Span')}\``, `token: ${REDACTED}`],
    [`mycli --password ${v('Opt')} --user bob`, `mycli --password ${REDACTED} --user bob`],
  ];
  for (const [text, expected] of cases) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }
});

describe('redaction of these shapes on hostile input', () => {
  const unchanged = (text: string): string => text;
  redactsHostileFast([
    ['a secret name and an opening parenthesis, repeated', megabyteOf('token = ('), unchanged],
    ['a quoted secret, then a megabyte of line breaks', `token = "abcd"${'\n '.repeat(MB / 2)}`, (t) => t.replace('abcd', REDACTED)],
    ['a quoted secret, then an unclosed literal', `token = "abcd" "${'a'.repeat(MB)}`, (t) => t.replace('abcd', REDACTED)],
    ['a quoted secret, then adjacent literals', `token = "abcd"${megabyteOf(' "ab"')}`, (t) => t.replace('abcd', REDACTED).replaceAll('"ab"', `"${REDACTED}"`)],
    ['quoted names after a ternary, repeated', megabyteOf("x ? 'token' : "), unchanged],
    ['a long name, then its own last word', `${'a_'.repeat(MB / 2)}token = "token"`, unchanged],
    ['a capitalised first argument without an end', `("A${'a'.repeat(MB)}_token", "abcd")`, (t) => t.replace('"abcd"', `"${REDACTED}"`)],
    ['a secret name, then a dotted call', `token = ${'a.'.repeat(MB / 2)}b(`, unchanged],
    ['names to unpack, then a secret name', `${'a, '.repeat(MB / 3)}token = split`, (t) => t.replace('= split', `= ${REDACTED}`)],
    ['operands of code after secret names', megabyteOf('token = messageId, '), unchanged],
    ['lines of long identifiers', megabyteOf('shouldReturnEmptyListWhenNoItemsExist404\n'), unchanged],
    // Each BEGIN line alone, the blank end after the last taken with it.
    ['OpenVPN static key headers', megabyteOf(`${STATIC_KEY_BEGIN}\n`), (t) => t.replaceAll(STATIC_KEY_BEGIN, REDACTED).replace(/\n$/, '')],
    ['an endpoint name, then a megabyte of a path', `tokenEndpoint = "${'a/'.repeat(MB / 2)}"`, () => `tokenEndpoint = "${REDACTED}"`],
  ]);
});
