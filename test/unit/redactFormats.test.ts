// Secrets in formats redaction missed (passwords given as a program's option, SSHPASS, Telegram
// and Discord tokens, presigned URLs, a token as a URL's user, a private JSON Web Key, a private
// key as one line of base64 DER, a secret in base64, a JWT's literal secret, Kotlin's ?: and
// Rust's String::from) and code it wrecked (this.apiKey = apiKey;): each leak here went through
// redact() unchanged before, each look-alike must come through unchanged, and every new pattern
// runs in linear time. And the files whose path marks them secret, as the README promises.

import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { REDACTED, isSecretPath, redact, redactEachLine, redactJson, redactLines } from '../../src/core/capture/redact';
import { MB, megabyteOf, redactsHostileFast } from './redactFixture';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

describe('capture: secrets given as a program option', () => {
  const leaks: [string, string][] = [
    ['gh secret set DB_PASSWORD --body Zq9GhBodyXk2Lm7', `gh secret set DB_PASSWORD --body ${REDACTED}`],
    ['gh secret set DB_PASSWORD -b Zq9GhBodyXk2Lm7 --repo acme/web', `gh secret set DB_PASSWORD -b ${REDACTED} --repo acme/web`],
    ['gh secret set TOKEN --body="Zq9GhBodyXk2Lm7"', `gh secret set TOKEN --body="${REDACTED}"`],
    ['az storage blob upload --account-name acmeprod --account-key Zq9AzAcctKeyXk2Lm7Pq4Rt8== -c backups', `az storage blob upload --account-name acmeprod --account-key ${REDACTED} -c backups`],
    ['az login --service-principal -u 0a1b2c3d-app -p Zq9AzSecretXk2~Lm7 --tenant acme.io', `az login --service-principal -u 0a1b2c3d-app -p ${REDACTED} --tenant acme.io`],
    ['mysqladmin -u root -pZq9MyAdminXk2Lm7 status', `mysqladmin -u root -p${REDACTED} status`],
    ['ldapsearch -x -D cn=admin,dc=acme,dc=io -w Zq9LdapBindXk2Lm7 -b dc=acme,dc=io', `ldapsearch -x -D cn=admin,dc=acme,dc=io -w ${REDACTED} -b dc=acme,dc=io`],
    ['zip -P Zq9ZipPassXk2Lm7 backup.zip db.sql', `zip -P ${REDACTED} backup.zip db.sql`],
    ['7z a -pZq9SevenZipXk2 backup.7z db.sql', `7z a -p${REDACTED} backup.7z db.sql`],
    ["ssh-keygen -t ed25519 -N 'Zq9KeygenPassXk2' -f deploy_key", `ssh-keygen -t ed25519 -N '${REDACTED}' -f deploy_key`],
    ['ssh-keygen -p -P Zq9OldPassXk2 -N "Zq9NewPassXk3" -f key', `ssh-keygen -p -P ${REDACTED} -N "${REDACTED}" -f key`],
    ['smbclient //fs.acme.io/share -U bob%Zq9SmbPassXk2Lm7', `smbclient //fs.acme.io/share -U bob%${REDACTED}`],
    ['openssl enc -aes-256-cbc -salt -k Zq9OpensslKXk2Lm7 -in db.sql -out db.sql.enc', `openssl enc -aes-256-cbc -salt -k ${REDACTED} -in db.sql -out db.sql.enc`],
    ['openssl enc -d -aes-256-cbc -pass pass:Zq9OpensslPassXk2 -in db.enc', `openssl enc -d -aes-256-cbc -pass pass:${REDACTED} -in db.enc`],
    ['keytool -genkeypair -alias app -keystore app.jks -storepass Zq9StorePassXk2 -keypass Zq9KeyPassXk2', `keytool -genkeypair -alias app -keystore app.jks -storepass ${REDACTED} -keypass ${REDACTED}`],
    ['keytool -importkeystore -srcstorepass Zq9SrcPassXk2 -deststorepass Zq9DestPassXk2', `keytool -importkeystore -srcstorepass ${REDACTED} -deststorepass ${REDACTED}`],
    ['curl --cookie "sessionid=Zq9SessCookieXk2Lm7Pq4" https://admin.example.com/api', `curl --cookie "sessionid=${REDACTED}" https://admin.example.com/api`],
    ["curl -b 'sid=Zq9SidXk2; csrftoken=Zq9CsrfXk2; Path=/' https://a.io", `curl -b 'sid=${REDACTED}; csrftoken=${REDACTED}; Path=/' https://a.io`],
    ['curl -s -b session=Zq9SessXk2Lm7 https://a.io', `curl -s -b session=${REDACTED} https://a.io`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  // The same options where they take no secret: another program's, a file, an empty passphrase, a prompt.
  const kept = [
    'mysql -p mydb',
    'gh secret set DB_PASSWORD --body-file secret.txt',
    'gh secret list -b main',
    'az storage account keys list --account-name acmeprod',
    'openssl req -new -keyout key.pem -out req.csr',
    'openssl x509 -in cert.pem -noout -text',
    "ssh-keygen -t ed25519 -N '' -f deploy_key",
    'zip -r backup.zip dist',
    'ldapsearch -x -W -b dc=acme,dc=io',
    'smbclient //fs.acme.io/share -U bob',
    'keytool -list -keystore app.jks',
    'curl -b cookies.txt -c cookies.txt https://a.io',
    'git log -p -w',
    'tar -P -czf backup.tgz /srv',
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }
});

describe('capture: SSHPASS and names ending in PASS', () => {
  const leaks: [string, string][] = [
    ['SSHPASS=Zq9SshPassXk2 sshpass -e rsync -a dist/ deploy@web:/srv', `SSHPASS=${REDACTED} sshpass -e rsync -a dist/ deploy@web:/srv`],
    ['export SSHPASS=Zq9EnvrcPassXk2', `export SSHPASS=${REDACTED}`],
    ['PGPASS="Zq9PgPassXk2"', `PGPASS="${REDACTED}"`],
    ['ROOTPASS: Zq9RootPassXk2', `ROOTPASS: ${REDACTED}`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }
  for (const text of ['bypass = true', 'compass: north', 'surpass = 3', 'PGPASSFILE=/etc/pgpass.conf', 'sshpass -e ssh deploy@web']) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }
});

describe('capture: tokens in URLs and vendor formats', () => {
  const leaks: [string, string][] = [
    ['The bot is 7012345678:AAHZq9TelegramXk2Lm7Pq4Rt8Vw3YsAbCd and posts', `The bot is ${REDACTED} and posts`],
    ['curl -s "https://api.telegram.org/bot7012345678:AAHZq9Xk2Lm7Pq4Rt8Vw3YsAbCdEfGhIjK/sendMessage" -d chat_id=42', `curl -s "https://api.telegram.org/bot${REDACTED}/sendMessage" -d chat_id=42`],
    ['export TELEGRAM_BOT=7012345678:AAHZq9TeleDocXk2Lm7Pq4Rt8Vw3YsAbCdE', `export TELEGRAM_BOT=${REDACTED}`],
    [
      'Alerts go to https://discord.com/api/webhooks/1234567890123456789/Zq9DiscordXk2Lm7Pq4Rt8Vw3YsAbCdEfGhIjKlMnOpQrStUvWx now',
      `Alerts go to https://discord.com/api/webhooks/1234567890123456789/${REDACTED} now`,
    ],
    ['https://discordapp.com/api/webhooks/123456789/Zq9DiscordAppXk2Lm7Pq4Rt8', `https://discordapp.com/api/webhooks/123456789/${REDACTED}`],
    [
      'https://acme.s3.amazonaws.com/dump.sql?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=604800&X-Amz-Signature=9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0',
      `https://acme.s3.amazonaws.com/dump.sql?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=604800&X-Amz-Signature=${REDACTED}`,
    ],
    ['https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=0a1b2c3d4e5f60718293a4b5c6d7e8f9', `https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=${REDACTED}`],
    ['https://d111.cloudfront.net/a.mp4?Expires=1767225600&Signature=Zq9CfSigXk2Lm7Pq4~Rt8Vw3&Key-Pair-Id=K2JCJMDEHXQW5F', `https://d111.cloudfront.net/a.mp4?Expires=1767225600&Signature=${REDACTED}&Key-Pair-Id=K2JCJMDEHXQW5F`],
    ['git clone https://Zq9UrlTokXk2Lm7Pq4Rt8Vw3Ys@git.internal.example.com/acme/web.git', `git clone https://${REDACTED}@git.internal.example.com/acme/web.git`],
    ['git remote add origin https://0123456789abcdef0123456789abcdef01234567@github.com/acme/web.git', `git remote add origin https://${REDACTED}@github.com/acme/web.git`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  const kept = [
    'the job ran 12:30:45 and 2024-01-31T12:30:45Z',
    'See https://discord.com/api/webhooks for the webhook API',
    'https://acme.s3.amazonaws.com/dump.sql?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=604800',
    'the Signature= parameter is computed per request',
    'git clone https://git@github.com/acme/web.git',
    'git clone ssh://deploy-bot-production-account@git.acme.io/web.git',
    'git clone https://buildserviceaccountuser@dev.azure.com/acme/web',
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }
});

describe('capture: private keys as a JSON Web Key and as base64 DER', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ed = generateKeyPairSync('ed25519');
  const jwk = rsa.privateKey.export({ format: 'jwk' }) as Record<string, string>;
  const ecJwk = ec.privateKey.export({ format: 'jwk' }) as Record<string, string>;

  it('redacts the private members of an RSA JSON Web Key, not its public ones', () => {
    const text = `jwks.json: ${JSON.stringify({ keys: [{ kid: 'prod-2026', use: 'sig', alg: 'RS256', ...jwk }] })}`;
    const out = redact(text);
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.ok(out.includes(`"${member}":"${REDACTED}"`) && !out.includes(jwk[member]), member);
    for (const member of ['n', 'e']) assert.ok(out.includes(`"${member}":"${jwk[member]}"`), member);
    assert.ok(out.includes('"kid":"prod-2026"'));
  });

  it('redacts the d of an EC JSON Web Key, pretty-printed, as lines too; x and y stay', () => {
    const lines = JSON.stringify(ecJwk, null, 2).split('\n');
    const out = redactLines(lines).join('\n');
    assert.ok(!out.includes(ecJwk.d) && out.includes(`"d": "${REDACTED}"`), out);
    assert.ok(out.includes(ecJwk.x) && out.includes(ecJwk.y), out);
  });

  it('redacts a symmetric JSON Web Key (k), its quotes escaped as in a log line', () => {
    const text = `{"msg": "loaded", "jwk": "{\\"kty\\":\\"oct\\",\\"k\\":\\"Zq9SymKeyXk2Lm7Pq4Rt8Vw3\\",\\"alg\\":\\"HS256\\"}"}`;
    assert.equal(redact(text), `{"msg": "loaded", "jwk": "{\\"kty\\":\\"oct\\",\\"k\\":\\"${REDACTED}\\",\\"alg\\":\\"HS256\\"}"}`);
  });

  it('redactJson redacts a JSON Web Key\'s private members whatever their value', () => {
    const out = JSON.parse(redactJson(JSON.stringify({ key: { ...jwk, kid: 'k1' } }))) as { key: Record<string, string> };
    assert.equal(out.key.d, REDACTED);
    assert.equal(out.key.qi, REDACTED);
    assert.equal(out.key.n, jwk.n);
    assert.equal(out.key.kid, 'k1');
  });

  it('keeps a public JSON Web Key, and a "d" outside one', () => {
    const publicJwk = JSON.stringify({ kty: 'RSA', kid: 'prod-2026', n: jwk.n, e: jwk.e });
    assert.equal(redact(publicJwk), publicJwk);
    const ecPublic = JSON.stringify({ kty: 'EC', crv: 'P-256', x: ecJwk.x, y: ecJwk.y });
    assert.equal(redact(ecPublic), ecPublic);
    assert.equal(redact('{"d": "2024-01-31-release", "p": "platform-web"}'), '{"d": "2024-01-31-release", "p": "platform-web"}');
  });

  const der = (key: typeof rsa.privateKey, type: 'pkcs8' | 'pkcs1' | 'sec1'): string => key.export({ format: 'der', type }).toString('base64');
  const leaks: [what: string, text: string][] = [
    ['PKCS#8 RSA under "key"', `{"kid": "prod-2026", "alg": "RS256", "key": "${der(rsa.privateKey, 'pkcs8')}"}`],
    ['PKCS#1 RSA as tls_key=', `tls_key=${der(rsa.privateKey, 'pkcs1')}`],
    ['SEC 1 EC under a YAML name', `signing: ${der(ec.privateKey, 'sec1')}`],
    ['PKCS#8 EC', `EC=${der(ec.privateKey, 'pkcs8')}`],
    ['PKCS#8 Ed25519', `ed: ${der(ed.privateKey, 'pkcs8')}`],
    ['encrypted PKCS#8', `blob = ${rsa.privateKey.export({ format: 'der', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'x' }).toString('base64')}`],
  ];
  for (const [what, text] of leaks) {
    it(`redacts a private key as one line of base64 DER: ${what}`, () => {
      const out = redact(text);
      assert.ok(out.endsWith(REDACTED) || out.endsWith(`${REDACTED}"}`), out.slice(0, 120));
      assert.ok(out.length < 80, out.slice(0, 120));
    });
  }

  it('keeps a public key as one line of base64 DER (SPKI, PKCS#1)', () => {
    for (const type of ['spki', 'pkcs1'] as const) {
      const text = `pub: ${rsa.publicKey.export({ format: 'der', type }).toString('base64')}`;
      assert.equal(redact(text), text, type);
    }
    const ecPublic = `pub: ${ec.publicKey.export({ format: 'der', type: 'spki' }).toString('base64')}`;
    assert.equal(redact(ecPublic), ecPublic);
  });
});

describe('capture: a secret given in base64', () => {
  const leaks: [string, string][] = [
    [`  DATABASE_URL: ${b64('postgres://app:Zq9NewDbPassXk3@db.prod.internal:5432/app')}`, `  DATABASE_URL: ${REDACTED}`],
    [`CONFIG=${b64('SMTP_PASSWORD=Zq9SmtpPassXk2\nSMTP_HOST=mail')}`, `CONFIG=${REDACTED}`],
    [`  .dockerconfigjson: ${b64(`{"auths":{"registry.acme.io":{"auth":"${b64('ci:Zq9RegistryPassXk4')}"}}}`)}`, `  .dockerconfigjson: ${REDACTED}`],
    [`"value": "${b64('ghp_Zq9Ab3De6Gh9Jk2Mn5Pq8StUvWxYz01234567')}"`, `"value": "${REDACTED}"`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text.slice(0, 60))}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  it('redacts a Secret manifest\'s base64 value on its line alone (a diff line without kind: Secret)', () => {
    const line = `+  DATABASE_URL: ${b64('postgres://app:Zq9OldEditPassXk2@db.prod.internal:5432/app')}`;
    assert.deepEqual(redactLines([line]), [`+  DATABASE_URL: ${REDACTED}`]);
  });

  // Base64 of text without a secret, and base64-alphabet words that decode to no text.
  const kept = [
    `  LOG_LEVEL: ${b64('info')}`,
    `  GREETING: ${b64('hello world, this is fine')}`,
    `  HOST: ${b64('db.prod.internal:5432')}`,
    'commit d41d8cd98f00b204e9800998ecf8427e fixed it',
    'const someVeryLongIdentifierName = computeTheThing();',
    'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }
});

describe('capture: secrets in code calls and fallbacks', () => {
  const leaks: [string, string][] = [
    ['Tokens are minted with jwt.sign(payload, "Zq9JwtSignXk2Lm7Pq4Rt8", { expiresIn: "1h" })', `Tokens are minted with jwt.sign(payload, "${REDACTED}", { expiresIn: "1h" })`],
    ["const claims = jwt.verify(req.headers.token, 'Zq9JwtVerifyXk2');", `const claims = jwt.verify(req.headers.token, '${REDACTED}');`],
    ["jwt.sign({ sub: user.id, role: 'admin' }, 'Zq9JwtObjXk2', opts)", `jwt.sign({ sub: user.id, role: 'admin' }, '${REDACTED}', opts)`],
    ['token = jwt.encode(payload, "Zq9PyJwtXk2", algorithm="HS256")', `token = jwt.encode(payload, "${REDACTED}", algorithm="HS256")`],
    ['val apiKey = BuildConfig.API_KEY ?: "Zq9KotlinFbXk2Lm7Pq4"', `val apiKey = BuildConfig.API_KEY ?: "${REDACTED}"`],
    ['val token = System.getenv("TOKEN") ?: "Zq9KotlinEnvXk2"', `val token = System.getenv("TOKEN") ?: "${REDACTED}"`],
    ['let api_token = String::from("Zq9RustFromXk2Lm7");', `let api_token = String::from("${REDACTED}");`],
    ['let token: String = String::from("Zq9RustTypedXk2");', `let token: String = String::from("${REDACTED}");`],
    ['let password = SecretString::new("Zq9RustSecretXk2".into());', `let password = SecretString::new("${REDACTED}".into());`],
    ['let api_key = "Zq9RustToStringXk2".to_string();', `let api_key = "${REDACTED}".to_string();`],
    ['password = SecretStr("Zq9PySecretStrXk2")', `password = SecretStr("${REDACTED}")`],
    ['String apiKey = new String("Zq9JavaNewXk2");', `String apiKey = new String("${REDACTED}");`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  const kept = [
    'jwt.sign(payload, process.env.JWT_SECRET, { expiresIn: "1h" })',
    'jwt.verify(token, secret)',
    'jwt.sign(payload, `${prefix}${SECRET}`)',
    'jwt.decode(token)',
    'val name = user.name ?: "anonymous"',
    'val token = System.getenv("TOKEN") ?: error("TOKEN is not set")',
    'let api_token = String::new();',
    'let token = Token::from_env()?;',
    'let api_key = env::var("API_KEY").expect("API_KEY");',
    'let secret = std::string::String::with_capacity(64);',
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }
});

describe('capture: code that names a secret without holding one', () => {
  const kept = [
    'this.apiKey = apiKey;',
    'self.token = token',
    'self.api_key = api_key',
    'this.secret = newSecret;',
    'token = tokens[i]',
    'const password = passwords[user];',
    'password = passwords.get(user)',
    'secret = secret.trim()',
    'password: "{{ .Values.db.password }}"',
    "password: '{{ db_password }}'",
    'token: "${{ secrets.DEPLOY_TOKEN }}"',
    'let token = Config::from_env();',
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }

  // The same shapes holding a secret: digits among the letters, a value that is no variable.
  const leaks: [string, string][] = [
    ['this.apiKey = Zq9ThisKeyXk2;', `this.apiKey = ${REDACTED};`],
    ['token = Zq9tok3n[1]', `token = ${REDACTED}[1]`],
    ['password = password', `password = ${REDACTED}`],
    ['db.password = hunterpass', `db.password = ${REDACTED}`],
    ['password: "{{ not a slot"', `password: "${REDACTED}"`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }
});

describe('capture: files never captured (README: .env*, *.pem, *.key, id_*, secrets/)', () => {
  it('treats dotenv files of any name and ssh key files as secret paths', () => {
    for (const f of ['.envrc', 'app/.envrc', '.envrc.local', '.env_local', '.env-prod', '.environment', 'prod.env', 'deploy/staging.env', '.env', '.env.production', 'home/.ssh/id_deploy', 'id_deploy.pub', 'id_github_ed25519', 'id_rsa.bak', 'id_rsa', 'id_ed25519_sk.pub', 'config/secrets/db.json', 'certs/server.pem', 'k/tls.key']) {
      assert.ok(isSecretPath(f), f);
    }
  });
  it('keeps source and documents whose names only look alike', () => {
    for (const f of ['src/id_utils.ts', 'pkg/id_test.go', 'src/environment/.envrc.md', 'docs/.env-setup.txt', 'src/env.ts', 'environment.ts', 'src/my.env.ts', 'docs/secretary.md', 'README.md']) {
      assert.ok(!isSecretPath(f), f);
    }
  });
});

describe('capture: redaction of hostile input (formats)', () => {
  const unchanged = (text: string): string => text;
  let distinctEncoded = '';
  for (let i = 0; distinctEncoded.length < MB; i++) distinctEncoded += `${b64(`token=Zq9${String(i).padStart(7, '0')}`)} `;
  redactsHostileFast([
    ['a program option repeated without a value', `zip${megabyteOf(' -P')}`, unchanged],
    ['a program option then an unclosed quote', `zip -P "${'a'.repeat(MB)}`, unchanged],
    ['keytool options without a value', `keytool${megabyteOf(' -storepass')}`, unchanged],
    ['smbclient -U without a %', `smbclient${megabyteOf(' -U a')}`, unchanged],
    ['curl -b with unclosed quotes', `curl${megabyteOf(' -b "a')}`, unchanged],
    ['names ending in pass', megabyteOf('sshpass'), unchanged],
    ['Discord webhook paths without a token', megabyteOf('discord.com/api/webhooks/1/'), unchanged],
    ['Telegram ids without a token', megabyteOf('12345:A'), unchanged],
    ['a run of digits before a Telegram-like token', `${'1'.repeat(MB)}:A${'b'.repeat(34)}`, unchanged],
    ['signature parameters without a value', megabyteOf('?Signature='), unchanged],
    ['URL users without an @', megabyteOf('://aaaaaaaaaaaaaaaaaaaaaaaaa'), unchanged],
    ['backslashes before a JWK member', `{"kty": "RSA", ${'\\'.repeat(MB)}`, unchanged],
    ['JWK members without a closing quote', megabyteOf('{"kty":"a","d":"'), unchanged],
    ['one run of base64 that starts like DER', `M${'A'.repeat(MB)}`, unchanged],
    ['runs of base64 that start like DER', megabyteOf(`M${'A'.repeat(47)} `), unchanged],
    ['one encoded secret repeated', megabyteOf(`${b64('password=hunter222')} `), (t) => t.replace(/\S+/g, REDACTED)],
    ['distinct encoded secrets', distinctEncoded, (t) => t.replace(/\S+/g, REDACTED)],
    ['jwt.sign without a closing parenthesis', `jwt.sign(${'a'.repeat(MB)}`, unchanged],
    ['Rust String::from without a closing quote', `token = String::from("${'a'.repeat(MB)}`, unchanged],
    ['Kotlin fallbacks without a closing quote', `token ?: "${'a'.repeat(MB)}`, unchanged],
    ['a secret name then a path of one long name', `token = ${'a'.repeat(MB)}::b`, unchanged],
    ['a secret name then indexes', megabyteOf('token = a['), unchanged],
    ['constructors storing a parameter', megabyteOf('this.token = token;'), unchanged],
  ]);
});

describe('capture: a JSON list of lines is redacted as lines', () => {
  const key = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAzq9pemBodyLineOneAbCdEfGhIjKlMnOpQrStUvWxYz0123456', 'Zq9ImpTailKeyXy7Wv==', '-----END RSA PRIVATE KEY-----'];
  it("a private key given one line per item goes whole, as observe's lists do (an import's facts)", () => {
    assert.equal(redactJson(JSON.stringify(['before', ...key, 'after'])), JSON.stringify(['before', REDACTED, 'after']));
  });
  it('a list of ordinary lines, and a list under a secret name, are kept and redacted as before', () => {
    const facts = ['Uses the flimwobble queue', 'password: string', 'MAX_TOKENS = 4096'];
    assert.equal(redactJson(JSON.stringify(facts)), JSON.stringify(facts));
    assert.equal(redactJson(JSON.stringify({ passwords: ['a', 'b'] })), JSON.stringify({ passwords: [REDACTED, REDACTED] }));
  });
});

describe('capture: a secret split over literals joined by + or .', () => {
  const leaks: [string, string][] = [
    ["const token = 'ghp_Zq9SplitFirstHalfXk' +\n  'Zq9SplitSecondHalfXk2';", `const token = '${REDACTED}' +\n  '${REDACTED}';`],
    ['$apiKey = "sk_live_Zq9Php" . "Zq9PhpSecondHalf";', `$apiKey = "${REDACTED}" . "${REDACTED}";`],
    ['API_KEY = "Zq9PyFirst" + "Zq9PySecond" + "Zq9PyThird"', `API_KEY = "${REDACTED}" + "${REDACTED}" + "${REDACTED}"`],
  ];
  for (const [text, want] of leaks) {
    it(`redacts every part of ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), want);
    });
  }

  it('redacts the second literal in a diff side, where it is a line of its own', () => {
    assert.deepEqual(redactEachLine(["const token = 'ghp_Zq9SplitFirstHalfXk' +", "  'Zq9SplitSecondHalfXk2';"]), [`const token = '${REDACTED}' +`, `  '${REDACTED}';`]);
  });

  // Code after the value is kept: a variable joined on, a method called on the literal.
  const kept: [string, string][] = [
    ["const token = 'ghp_Zq9JoinedVarXk' + suffix;", `const token = '${REDACTED}' + suffix;`],
    ["const secret = 'Zq9Replaced'.replace('a', 'b');", `const secret = '${REDACTED}'.replace('a', 'b');`],
    ["max_tokens: '4096' + 'x'", "max_tokens: '4096' + 'x'"],
  ];
  for (const [text, want] of kept) {
    it(`keeps the code around ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), want);
    });
  }

  const JOINS = Math.ceil(MB / " + 'ab'".length);
  redactsHostileFast([
    ['literals joined onto a secret, the last unclosed', `const token = 'Zq9Start'${" + 'ab'".repeat(JOINS)} + "unclosed`, () => `const token = '${REDACTED}'${` + '${REDACTED}'`.repeat(JOINS)} + "unclosed`],
    ['joins without a literal after a secret', `const token = 'Zq9Start'${megabyteOf(' + ')}`, (t) => `const token = '${REDACTED}'${t.slice("const token = 'Zq9Start'".length)}`],
  ]);
});

describe('capture: a password echoed into a command, a Vault token as an argument, jarsigner', () => {
  const leaks: [string, string][] = [
    ['echo Zq9DockerPwXk2 | docker login -u bob --password-stdin registry.acme.io', `echo ${REDACTED} | docker login -u bob --password-stdin registry.acme.io`],
    ["printf '%s' 'Zq9HelmPwXk2' | helm registry login ghcr.io -u bob --password-stdin", `printf '%s' '${REDACTED}' | helm registry login ghcr.io -u bob --password-stdin`],
    ['echo -n Zq9NoNewlineXk2 | docker login --password-stdin', `echo -n ${REDACTED} | docker login --password-stdin`],
    ['ansible-vault view secrets.yml --vault-password-file <(echo Zq9VaultPwXk2)', `ansible-vault view secrets.yml --vault-password-file <(echo ${REDACTED})`],
    ['vault login hvs.Zq9abcdefghijklmnop', `vault login ${REDACTED}`],
    ['vault login -no-print Zq9TokenAfterFlag12', `vault login -no-print ${REDACTED}`],
    ['jarsigner -storepass Zq9JarPwXk2 app.jar alias', `jarsigner -storepass ${REDACTED} app.jar alias`],
  ];
  for (const [text, want] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), want);
    });
  }

  const kept = [
    'echo "$CR_PAT" | docker login ghcr.io -u bob --password-stdin',
    'cat ~/token.txt | docker login -u bob --password-stdin',
    'vault login -',
    'vault login $VAULT_TOKEN',
    'vault login -method=oidc',
    'echo hello world | grep hello',
    'echo done | tee log.txt',
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }

  redactsHostileFast([
    ['echoes without a login after them', megabyteOf('echo abcdef '), (t) => t],
    ['vault login options without a value', megabyteOf('vault login -a '), (t) => t],
  ]);
});
