// Password hashes and the other credential shapes of credential files, found in any file: they
// were redacted only in files whose path is secret (.htpasswd), and bare hashes elsewhere (a
// fixture, a SQL dump, an LDIF, a shadow line pasted into a note) reached the store. Every hash
// format (bcrypt, crypt's $1$ $5$ $6$ $apr1$ $y$, PHC strings such as argon2, Django's, Werkzeug's,
// PostgreSQL's and MySQL's, LDAP's and Spring's schemes in braces, pwdump's NT hashes, a DES crypt
// as an htpasswd line) is redacted through redact(), as lines, and through git import and observe
// to the store files, its scheme and cost kept; a password in braces in a connection string and a
// .netrc password before its login too. The look-alikes stay as written: '$1' and '$2' in shell,
// regex and replacement strings, versions, lockfiles' digests, git SHAs, a scheme named in prose.
// Every hash here is built by concatenation, so no scanner takes this file for one.

import { strict as assert } from 'node:assert';
import { REDACTED, isSecretPath, redact, redactLines } from '../../src/core/capture/redact';
import { importGitHistory } from '../../src/core/capture/gitImport';
import { filesContaining } from './diskFixture';
import { commitAll, git } from './gitImportFixture';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const c = (...parts: string[]): string => parts.join('');
const CRYPT_CHARS = c('aB3dE5gH7jK9mN1pQ3sT5vW7yZ0bC2eF4hJ6kL8nP0rS2uV4xY6', 'a1b2c3d4e5f6g7h8i9j0kAlBmCnDoEpFqGrHsItJuKvLwMxNyOzP');
/** `n` characters of crypt's base64 (and standard base64's), unique to `tag` (two letters or digits). */
const crypt = (tag: string, n: number): string => c(tag, 'Qz9', CRYPT_CHARS).slice(0, n);
/** `n` lowercase hex digits, unique to `tag` (hex digits). */
const hex = (tag: string, n: number): string => c(tag, 'f00d', '0123456789abcdef'.repeat(10)).slice(0, n);
const HEX = (tag: string, n: number): string => hex(tag, n).toUpperCase();

/** [what, text, as redacted, the secret part that must not be stored]. */
const HASHES: [what: string, text: string, redacted: string, secret: string][] = [
  ['bcrypt $2b$ in an htpasswd line', c('admin:$2b$12$', crypt('Bb', 53)), 'admin:$2b$12$[REDACTED]', crypt('Bb', 53)],
  ['bcrypt $2y$ in a SQL dump', c("INSERT INTO users VALUES ('bob', '$2y$10$", crypt('By', 53), "');"), "INSERT INTO users VALUES ('bob', '$2y$10$[REDACTED]');", crypt('By', 53)],
  ['bcrypt $2a$ under Spring\'s {bcrypt}', c('  password: "{bcrypt}$2a$10$', crypt('Ba', 53), '"'), '  password: "[REDACTED]"', crypt('Ba', 53)],
  ['md5crypt $1$ in a shadow line', c('root:$1$', crypt('M1', 8), '$', crypt('M2', 22), ':18000:0:99999:7:::'), 'root:$1$[REDACTED]:18000:0:99999:7:::', crypt('M2', 22)],
  ['Apache $apr1$', c('alice:$apr1$', crypt('A1', 8), '$', crypt('A2', 22)), 'alice:$apr1$[REDACTED]', crypt('A2', 22)],
  ['SHA-256 crypt $5$ with rounds', c('hash $5$rounds=5000$', crypt('F1', 16), '$', crypt('F2', 43), ' stored'), 'hash $5$rounds=5000$[REDACTED] stored', crypt('F2', 43)],
  ['SHA-512 crypt $6$ in a shadow line', c('deploy:$6$', crypt('S1', 16), '$', crypt('S2', 86), ':19000:0:99999:7:::'), 'deploy:$6$[REDACTED]:19000:0:99999:7:::', crypt('S2', 86)],
  ['a locked SHA-512 crypt', c('ops:!$6$', crypt('L1', 12), '$', crypt('L2', 86), ':19000::::::'), 'ops:!$6$[REDACTED]:19000::::::', crypt('L2', 86)],
  ['yescrypt $y$ in a shadow line', c('bob:$y$j9T$', crypt('Y1', 22), '$', crypt('Y2', 43), ':19500:0:99999:7:::'), 'bob:$y$j9T$[REDACTED]:19500:0:99999:7:::', crypt('Y2', 43)],
  ['argon2id (PHC)', c('stored $argon2id$v=19$m=65536,t=3,p=4$', crypt('R1', 22), '$', crypt('R2', 43)), 'stored $argon2id$v=19$m=65536,t=3,p=4$[REDACTED]', crypt('R2', 43)],
  ['passlib scrypt (PHC)', c('$scrypt$ln=16,r=8,p=1$', crypt('P1', 22), '$', crypt('P2', 43)), '$scrypt$ln=16,r=8,p=1$[REDACTED]', crypt('P2', 43)],
  ['passlib pbkdf2-sha256', c('$pbkdf2-sha256$29000$', crypt('K1', 22), '$', crypt('K2', 43)), '$pbkdf2-sha256$29000$[REDACTED]', crypt('K2', 43)],
  ['Django pbkdf2_sha256', c('pbkdf2_sha256$870000$', crypt('D1', 22), '$', crypt('D2', 43), '='), 'pbkdf2_sha256$870000$[REDACTED]', crypt('D2', 43)],
  ['Django argon2', c('argon2$argon2id$v=19$m=102400,t=2,p=8$', crypt('D3', 22), '$', crypt('D4', 43)), 'argon2$argon2id$v=19$m=102400,t=2,p=8$[REDACTED]', crypt('D4', 43)],
  ['Django bcrypt_sha256', c('bcrypt_sha256$$2b$12$', crypt('D5', 53)), 'bcrypt_sha256$$2b$12$[REDACTED]', crypt('D5', 53)],
  ['Django scrypt', c('scrypt$16384$', crypt('D6', 22), '$8$1$', crypt('D7', 44)), 'scrypt$16384$[REDACTED]', crypt('D7', 44)],
  ['Django sha1', c('sha1$', crypt('D8', 12), '$', hex('d8', 40)), 'sha1$[REDACTED]', hex('d8', 40)],
  ['Werkzeug pbkdf2', c('pbkdf2:sha256:600000$', crypt('W1', 16), '$', hex('a1', 64)), 'pbkdf2:sha256:600000$[REDACTED]', hex('a1', 64)],
  ['Werkzeug scrypt', c('scrypt:32768:8:1$', crypt('W2', 16), '$', hex('b2', 128)), 'scrypt:32768:8:1$[REDACTED]', hex('b2', 128)],
  ['PostgreSQL SCRAM-SHA-256', c(' bob | SCRAM-SHA-256$4096:', crypt('G1', 24), '$', crypt('G2', 44), ':', crypt('G3', 44)), ' bob | SCRAM-SHA-256$4096:[REDACTED]', crypt('G3', 44)],
  ['PostgreSQL md5', c(' bob | md5', hex('c3', 32)), ' bob | md5[REDACTED]', hex('c3', 32)],
  ['MySQL native password', c("mysql_native_password AS '*", HEX('d4', 40), "';"), "mysql_native_password AS '*[REDACTED]';", HEX('d4', 40)],
  ['LDAP {SSHA}', c('userPassword: {SSHA}', crypt('L3', 32)), 'userPassword: {SSHA}[REDACTED]', crypt('L3', 32)],
  ['LDAP {SHA} in an htpasswd line', c('carol:{SHA}', crypt('L4', 27), '='), 'carol:{SHA}[REDACTED]', crypt('L4', 27)],
  ['LDAP {ssha512} lowercase', c('hash={ssha512}', crypt('L5', 88)), 'hash={ssha512}[REDACTED]', crypt('L5', 88)],
  ['LDAP {CRYPT} and a $6$', c('userPassword: {CRYPT}$6$', crypt('L6', 8), '$', crypt('L7', 86)), 'userPassword: {CRYPT}$6$[REDACTED]', crypt('L7', 86)],
  ['Dovecot {SHA512-CRYPT}', c('dave:{SHA512-CRYPT}$6$', crypt('V1', 16), '$', crypt('V2', 86), '::::::'), 'dave:{SHA512-CRYPT}$6$[REDACTED]::::::', crypt('V2', 86)],
  ['Spring {sha256} in hex', c('{sha256}', hex('a7', 80)), '{sha256}[REDACTED]', hex('a7', 80)],
  ['Dovecot {SCRAM-SHA-256}', c('gina:{SCRAM-SHA-256}4096,', crypt('V4', 24), ',', crypt('V5', 44), ',', crypt('V6', 44)), 'gina:{SCRAM-SHA-256}[REDACTED]', crypt('V6', 44)],
  ['Dovecot {PLAIN}', c('erin:{PLAIN}', crypt('V3', 14), '::::::'), 'erin:{PLAIN}[REDACTED]::::::', crypt('V3', 14)],
  ['Spring {noop}', c('.password("{noop}', crypt('N1', 12), '")'), '.password("{noop}[REDACTED]")', crypt('N1', 12)],
  ['pwdump NT hashes', c('Administrator:500:', hex('e5', 32), ':', hex('f6', 32), ':::'), 'Administrator:500:[REDACTED]:::', hex('f6', 32)],
  ['DES crypt as an htpasswd line', c('frank:', crypt('De', 13)), 'frank:[REDACTED]', crypt('De', 13)],
  ['DES crypt as an htpasswd line of an email address', c('Ann.Lee@example.com:', crypt('Df', 13)), 'Ann.Lee@example.com:[REDACTED]', crypt('Df', 13)],
];

/** Other credential shapes of credential files, in files of any name: [what, text, as redacted, the secret]. */
const CREDENTIALS: [what: string, text: string, redacted: string, secret: string][] = [
  ['an ODBC password in braces', c('Driver={ODBC Driver 18};Server=db;UID=bob;PWD={', crypt('O1', 10), ';x};'), 'Driver={ODBC Driver 18};Server=db;UID=bob;PWD={[REDACTED]};', crypt('O1', 10)],
  ['a SQL Server JDBC password in braces', c('jdbc:sqlserver://db:1433;databaseName=app;user=bob;password={', crypt('O2', 10), '}}x};'), 'jdbc:sqlserver://db:1433;databaseName=app;user=bob;password={[REDACTED]};', crypt('O2', 10)],
  ['a .netrc password before its login', 'machine api.example.com password dragon login bob', 'machine api.example.com password [REDACTED] login bob', 'dragon'],
  // Redacted before this change too; held here with the others.
  ['a .netrc line', c('machine api.example.com login bob password ', crypt('E1', 12)), 'machine api.example.com login bob password [REDACTED]', crypt('E1', 12)],
  ['a .pgpass line', c('db.example.com:5432:app:appuser:', crypt('E2', 12)), 'db.example.com:5432:app:appuser:[REDACTED]', crypt('E2', 12)],
  ['a password in a URL query', c('postgres://db.example.com/app?user=bob&password=', crypt('E3', 12)), 'postgres://db.example.com/app?user=bob&password=[REDACTED]', crypt('E3', 12)],
  ['an ADO.NET Password=', c('Server=tcp:db,1433;Database=app;User ID=bob;Password=', crypt('E4', 12), ';Encrypt=true'), 'Server=tcp:db,1433;Database=app;User ID=bob;Password=[REDACTED];Encrypt=true', crypt('E4', 12)],
  ['a JDBC password=', c('jdbc:mysql://db:3306/app?user=x&password=', crypt('E5', 12)), 'jdbc:mysql://db:3306/app?user=x&password=[REDACTED]', crypt('E5', 12)],
  ['a docker config.json auth', c('{"auths":{"ghcr.io":{"auth":"', Buffer.from(c('bob:', crypt('E6', 12))).toString('base64'), '"}}}'), '{"auths":{"ghcr.io":{"auth":"[REDACTED]"}}}', Buffer.from(c('bob:', crypt('E6', 12))).toString('base64')],
  ['a .git-credentials line', c('https://bob:', crypt('E7', 12), '@git.example.com'), 'https://bob:[REDACTED]@git.example.com', crypt('E7', 12)],
  ['a Basic Authorization header', c('Authorization: Basic ', Buffer.from(c('bob:', crypt('E8', 12))).toString('base64')), 'Authorization: Basic [REDACTED]', Buffer.from(c('bob:', crypt('E8', 12))).toString('base64')],
];

/** Text that only looks like a hash or a credential: kept as written. */
const LOOK_ALIKES = [
  'echo "$1$2$3"',
  "awk '{print $1$2$3$4$5$6}' file.txt",
  "perl -pe 's/(\\w+)-(\\w+)/$2$1/g'",
  "const out = s.replace(/(\\d+)\\.(\\d+)/, '$2$1');",
  "str.replace(re, '$1$2$3$4$5$6$7$8$9')",
  'sed -E "s/^([^:]*):(.*)$/$2:$1/"',
  'Makefile: $$1$$2',
  'where $y$ is the output and $x$ the input',
  'const re = /^\\$2[aby]\\$\\d\\d\\$[.\\/A-Za-z0-9]{53}$/;',
  'bcrypt hashes start with $2b$12$ and SHA-512 crypt ones with $6$',
  'the {SHA} scheme is weak, use {SSHA} or {SSHA512} instead',
  'Spring prefixes the encoder: {bcrypt}, {noop}, {pbkdf2}.',
  'See RFC 2307 for {CRYPT} and {MD5}.',
  'format = "{SHA}{digest}"',
  'userPassword: {SSHA}',
  'version 2.1.0, v1.2.3-beta.4, node v20.11.1, python:3.12-slim',
  '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="',
  'checksum = "a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4"',
  'requests==2.31.0 --hash=sha256:942c5a758f98d790eaed1a29cb6eefc7ffb0d1cf7af05c3d2791656dbd6ad1e1',
  'github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=',
  'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
  'image: node@sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4',
  'd41d8cd98f00b204e9800998ecf8427e  file.txt',
  'redis:7.2-alpine',
  'key:valueOnly',
  'conn = f"Driver={{ODBC Driver 18}};Server={host};PWD={password};"',
  '<Input password={password} onChange={setPassword} />',
  'the machine password is rotated weekly',
  // A template's slot named like a scheme: JavaScript's, Python's, a path after it.
  "const key = `${head}\\u0000${sha}\\u0000${[...files].sort().join('\\u0000')}`;",
  "git diff --numstat `${sha}..HEAD`",
  'name = f"release-{sha}.tar.gz"',
  'url = f"{md5}/artifacts/build123.zip"',
  'path = "{sha256}-linux-amd64.tar.gz".format(sha256=digest)',
];

describe('redaction of password hashes and credential files\' shapes in any file', function () {
  this.timeout(120_000);

  it('redacts every password hash format, its scheme and cost kept, as text and as lines', () => {
    for (const [what, text, redacted] of HASHES) {
      assert.equal(redact(text), redacted, what);
      assert.deepEqual(redactLines([text]), [redacted], `${what} (as a line)`);
    }
  });

  it('redacts a password in braces in a connection string and a .netrc password before its login', () => {
    for (const [what, text, redacted] of CREDENTIALS) {
      assert.equal(redact(text), redacted, what);
      assert.deepEqual(redactLines([text]), [redacted], `${what} (as a line)`);
    }
  });

  it('redacts the lines of an htpasswd file and of a shadow file under any name', () => {
    const htpasswd = HASHES.filter(([what]) => /htpasswd|apr1/.test(what));
    assert.deepEqual(
      redactLines(htpasswd.map(([, text]) => text)),
      htpasswd.map(([, , redacted]) => redacted),
    );
    const shadow = HASHES.filter(([what]) => /shadow/.test(what));
    const file = ['daemon:*:19000:0:99999:7:::', ...shadow.map(([, text]) => text), 'nobody:!:19000::::::'];
    assert.deepEqual(redactLines(file), ['daemon:*:19000:0:99999:7:::', ...shadow.map(([, , redacted]) => redacted), 'nobody:!:19000::::::']);
  });

  it('redacts an LDIF userPassword given in base64', () => {
    const value = Buffer.from(c('{SSHA}', crypt('L8', 32))).toString('base64');
    assert.equal(redact(`userPassword:: ${value}`), `userPassword:: ${REDACTED}`);
  });

  it('keeps what only looks like a hash: $1 and $2 in code, versions, digests, SHAs, schemes named in prose', () => {
    assert.deepEqual(
      LOOK_ALIKES.filter((text) => redact(text) !== text || redactLines([text])[0] !== text),
      [],
    );
  });

  it('takes password vaults and a system\'s shadow files for secret paths, not source named like them', () => {
    for (const file of ['vault/team.kdbx', 'Library/Keychains/login.keychain-db', 'backup/login.keychain', 'backup/etc/shadow', 'etc/gshadow-', 'etc/master.passwd']) assert.ok(isSecretPath(file), file);
    for (const file of ['src/shadow.ts', 'src/keychain.ts', 'docs/kdbx.md', 'src/shadow/index.ts', 'etc/passwd']) assert.ok(!isSecretPath(file), file);
  });

  describe('through capture, to the store files', () => {
    const scope = { project: 'github.com/acme/hashes' };
    const all = [...HASHES, ...CREDENTIALS];

    it('git import of commits adding them to files of any name (and one in a commit message) leaves none in the store files', async () => {
      const { engine, dir } = await openTestEngine();
      const repo = tempDir('hashes-repo');
      const message = c('Reset the admin hash to $2b$12$', crypt('Cm', 53));
      try {
        git(repo, ['init', '-q', '-b', 'main']);
        git(repo, ['config', 'commit.gpgsign', 'false']);
        commitAll(repo, { subject: 'Initial', files: { 'README.md': '# app\n' }, time: 1_700_000_000 });
        const files: Record<string, string> = {};
        all.forEach(([, text], i) => (files[`fixtures/users${i}.txt`] = `# fixture ${i}\n${text}\n`));
        files['deploy/users.htpasswd.example'] = `${HASHES.filter(([what]) => /htpasswd/.test(what)).map(([, text]) => text).join('\n')}\n`;
        commitAll(repo, { subject: 'Add user fixtures', files, time: 1_700_000_100 });
        commitAll(repo, { subject: message, files: { 'README.md': '# app\n\nadmin reset\n' }, time: 1_700_000_200 });
        await importGitHistory(engine, repo, { scope });
        await engine.flush();
      } finally {
        await engine.close();
        removeDir(repo);
      }
      const found = [...all, ['the commit message', message, '', crypt('Cm', 53)] as const].filter(([, , , secret]) => filesContaining(dir, secret).length > 0).map(([what]) => what);
      removeDir(dir);
      assert.deepEqual(found, []);
    });

    it('observe of a note quoting them leaves none in the store files', async () => {
      const { engine, dir } = await openTestEngine();
      try {
        await engine.observe(
          all.map(([what, text]) => ({ type: 'note', title: `users ${what}`, narrative: `The fixture reads:\n${text}\nand stays.` })),
          scope,
        );
        await engine.flush();
      } finally {
        await engine.close();
      }
      const found = all.filter(([, , , secret]) => filesContaining(dir, secret).length > 0).map(([what]) => what);
      removeDir(dir);
      assert.deepEqual(found, []);
    });
  });
});
