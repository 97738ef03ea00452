// Secrets that reached the store raw before: a value given to the AWS CLI (Secrets Manager's
// --secret-string, a SecureString's --value), a git setting written to a file named with --file
// or -f, an assignment URL-encoded inside a form or a query (client_secret%3D...), Square's
// tokens, and a user and password given together in prose. Each is redacted through redact() and
// through remember and observe to the store files; settings, references and prose about them
// stay as written, and a fallback that is a setting about a secret (tokenType ?? "Bearer") too.

import { strict as assert } from 'node:assert';
import { REDACTED, redact, redactLines } from '../../src/core/capture/redact';
import { filesContaining } from './diskFixture';
import { openTestEngine, removeDir } from './mcpFixture';
import { megabyteOf, redactsHostileFast, MB } from './redactFixture';

process.env.LANCEDB_LOG ??= 'error';

const unchanged = (text: string): string => text;

/** [what, text, the secret in it]: each secret distinct, even read without case. */
const SECRETS: [what: string, text: string, secret: string][] = [
  ['Secrets Manager --secret-string, quoted', "aws secretsmanager create-secret --name n --secret-string 'Zq9SmQuoted-1'", 'Zq9SmQuoted-1'],
  ['Secrets Manager put-secret-value', 'aws secretsmanager put-secret-value --secret-id n --secret-string Zq9SmBare-2', 'Zq9SmBare-2'],
  ['Secrets Manager JSON value', `aws secretsmanager create-secret --name db --secret-string '{"user":"app","key":"Zq9SmJson-3"}'`, 'Zq9SmJson-3'],
  ['SSM SecureString, type after', "aws ssm put-parameter --name n --value 'Zq9SsmAfter-4' --type SecureString", 'Zq9SsmAfter-4'],
  ['SSM SecureString, type before', 'aws ssm put-parameter --type SecureString --name /prod/db --value Zq9SsmBefore-5', 'Zq9SsmBefore-5'],
  ['SSM SecureString over continued lines', 'aws ssm put-parameter \\\n  --name /prod/db \\\n  --value "Zq9SsmLines-6" \\\n  --type SecureString', 'Zq9SsmLines-6'],
  ['git config --file', 'git config --file path/to/cfg github.token Zq9GitFile7x', 'Zq9GitFile7x'],
  ['git config -f', 'git config -f cfg user.password Zq9GitShortF8', 'Zq9GitShortF8'],
  ['git config --file=', 'git config --file=cfg sendemail.smtppass Zq9GitEquals9', 'Zq9GitEquals9'],
  ['URL-encoded client_secret', 'grant_type=client_credentials&client_secret%3D5b4a39281706f5e4d3c2b1a0Qq7', '5b4a39281706f5e4d3c2b1a0Qq7'],
  ['URL-encoded password after an encoded &', 'body=user%3Dbob%26password%3DxyzPw9encoded', 'xyzPw9encoded'],
  ['URL-encoded twice', 'redirect=%2Flogin%3Fnext%3D%252Fhome%26token%253DZq9Twice%252Fdef%2526x%253D1', 'Zq9Twice'],
  ['Square sq0atp-', 'client = Square(sq0atp-Rk4LmNoPqRsTuVwXyZ0a1B)', 'sq0atp-Rk4LmNoPqRsTuVwXyZ0a1B'],
  ['Square sq0csp-', 'SQUARE_APP = sq0csp-Hj7AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdef', 'sq0csp-Hj7AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdef'],
  ['Square EAAA access token', 'use EAAAEw8PqRsTuVwXyZaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefgh now', 'EAAAEw8PqRsTuVwXyZaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefgh'],
  ['a user and password in prose', 'the credentials are admin / pw123x', 'pw123x'],
  ['a login and password in prose', 'login: deploy/Gv5passWord', 'Gv5passWord'],
];

describe('redaction of CLI secret values, URL-encoded assignments, Square tokens and credential pairs', function () {
  this.timeout(120_000);

  it('redacts each secret, keeping what is around it', () => {
    for (const [what, text, secret] of SECRETS) {
      const out = redact(text);
      assert.ok(!out.includes(secret) && out.includes(REDACTED), `${what}: ${JSON.stringify(out)}`);
    }
    assert.equal(redact("aws secretsmanager create-secret --name n --secret-string 'Zq9SmQuoted-1'"), `aws secretsmanager create-secret --name n --secret-string '${REDACTED}'`);
    assert.equal(redact('aws ssm put-parameter --type SecureString --name /prod/db --value Zq9Ssm-5'), `aws ssm put-parameter --type SecureString --name /prod/db --value ${REDACTED}`);
    assert.equal(redact('git config -f cfg user.password Zq9GitShortF8'), `git config -f cfg user.password ${REDACTED}`);
    assert.equal(redact('body=user%3Dbob%26password%3DxyzPw9encoded%26next%3D1'), `body=user%3Dbob%26password%3D${REDACTED}%26next%3D1`);
    assert.equal(redact('the credentials are admin / pw123x.'), `the credentials are admin / ${REDACTED}.`);
  });

  it('redacts a command continued over lines when its lines are redacted as lines', () => {
    const lines = ['aws secretsmanager create-secret \\', '  --name db \\', '  --secret-string Zq9SmLines-10'];
    assert.deepEqual(redactLines(lines), ['aws secretsmanager create-secret \\', '  --name db \\', `  --secret-string ${REDACTED}`]);
    const ssm = ['aws ssm put-parameter \\', '  --value "Zq9SsmLines-11" \\', '  --type SecureString'];
    assert.deepEqual(redactLines(ssm), ['aws ssm put-parameter \\', `  --value "${REDACTED}" \\`, '  --type SecureString']);
  });

  it('keeps settings, references, public ids and prose about them', () => {
    for (const text of [
      'aws ssm put-parameter --name /app/region --value us-east-1 --type String',
      'aws ssm put-parameter --name p --value "$DB_PASSWORD" --type SecureString',
      'aws secretsmanager create-secret --name db --secret-string file://creds.json',
      'aws ssm get-parameter --name /prod/db --with-decryption',
      'pass the secret with the --secret-string option',
      'git config --file .gitmodules submodule.lib.url https://github.com/acme/lib.git',
      'git config -f secrets.cfg user.name bob',
      'x=token_type%3DBearer%26scope%3Dread',
      'x=password%3D%24DB_PASSWORD',
      'next=%2Fsettings%2Fpassword%3Fa%3D1',
      'Square application id sq0idp-wGVapF8sNt9PLrdj5znuKA',
      'data: EAAAEzq9AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijklmnop+/abc==',
      'the credentials are read / write',
      'the login is username/password based',
      'credentials are rotated / revoked monthly',
      'login: db:5432',
      'login to staging/prod via vpn',
      'Login with Google/GitHub',
      'login via oauth2/oidc',
      'const t = config.tokenType ?? "Bearer";',
      'const SECRET_NAME = process.env.SECRET_NAME ?? "default";',
      'const url = process.env.TOKEN_URL || "https://oauth2.example.com/token";',
    ]) {
      assert.equal(redact(text), text);
    }
  });

  it('still redacts a fallback literal after a secret lookup', () => {
    for (const [text, want] of [
      ['password=os.getenv("DB_PASSWORD", "hunter2-fallback")', `password=os.getenv("DB_PASSWORD", "${REDACTED}")`],
      ['const k = process.env.API_KEY || "literalKey9-value";', `const k = process.env.API_KEY || "${REDACTED}";`],
      ["const t = process.env.GITHUB_TOKEN ?? 'literalTok9-value';", `const t = process.env.GITHUB_TOKEN ?? '${REDACTED}';`],
      ["token = os.getenv('API_TOKEN') or 'literalTok8-value'", `token = os.getenv('API_TOKEN') or '${REDACTED}'`],
    ]) {
      assert.equal(redact(text), want);
    }
  });

  redactsHostileFast([
    ['--value options after put-parameter', `ssm put-parameter --type SecureString${megabyteOf(' --value')}`, unchanged],
    ['--value options over continued lines', `ssm put-parameter${megabyteOf(' \\\n --value x')}`, unchanged],
    ['--secret-string with an unclosed quote', `--secret-string "${'a'.repeat(MB)}`, unchanged],
    ['git config -f options', `git config${megabyteOf(' -f a')}`, unchanged],
    ['URL-encoded secret names without a value', megabyteOf('password%3D '), unchanged],
    ['an encoded secret value a megabyte long', `token%3D${'%41'.repeat(MB / 3)}`, () => `token%3D${REDACTED}`],
    ['login and a slash without a password', megabyteOf('login a / '), unchanged],
    ['EAAA without a token', megabyteOf('EAAA'), unchanged],
  ]);

  it('leaves no byte of these secrets in the store files, through remember and observe', async () => {
    const { engine, dir } = await openTestEngine();
    try {
      const half = Math.ceil(SECRETS.length / 2);
      for (const [what, text] of SECRETS.slice(0, half)) await engine.remember({ title: `ran ${what}`, text }, { project: 'acme/cli-secrets' });
      await engine.observe(SECRETS.slice(half).map(([what, text]) => ({ type: 'terminal', title: `ran ${what}`, narrative: text })), { project: 'acme/cli-secrets' });
      await engine.close();
      assert.deepEqual(SECRETS.filter(([, , secret]) => filesContaining(dir, secret).length > 0).map(([what]) => what), []);
    } finally {
      await engine.close().catch(() => undefined);
      removeDir(dir);
    }
  });
});
