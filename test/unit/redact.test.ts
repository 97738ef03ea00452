// Redaction on hostile input: every pattern must run in time linear in the text, and what it
// redacts must stay what it redacted before the patterns were rewritten for that.

import * as assert from 'node:assert/strict';
import { cleanList } from '../../src/core/capture/prepare';
import { REDACTED, isSecretPath, redact, redactEachLine, redactJson, redactKey, redactLines, registerSecret, secretKinds } from '../../src/core/capture/redact';
import { LINEAR_BOUND_MS, MB, megabyteOf, redactsHostileFast } from './redactFixture';


describe('capture: redaction of hostile input', () => {
  // Each of these made a pattern rescan one long run from every start position: quadratic or
  // worse, minutes to hours for a megabyte. Each must now finish well inside the test timeout,
  // with the same result as before: most hold no secret, a few are one long secret.
  const unchanged = (text: string) => text;
  const adversarial: [string, string, (text: string) => string][] = [
    ['runs of a=', megabyteOf('a='), unchanged],
    ['runs of token', megabyteOf('token'), unchanged],
    ['token then spaces, no value', `token${' '.repeat(MB)}`, unchanged],
    ['token: then spaces and a quote, no closing quote', `token: "${' '.repeat(MB)}`, unchanged],
    ['runs of quotes', megabyteOf(`"'`), unchanged],
    ['an opening quote and no closing one', `password="${'a'.repeat(MB)}`, unchanged],
    ['base64-ish characters without a terminator', megabyteOf('Aa0-_+/='), unchanged],
    ['secret names joined by dots and dashes', megabyteOf('password-x.'), unchanged],
    ['secret names joined by dots, then a call', megabyteOf('api_key.', '('), unchanged],
    ['scheme characters without ://', megabyteOf('a.b-c+'), unchanged],
    ['a scheme and a user without a password', `a://${'b.'.repeat(MB / 2)}`, unchanged],
    ['JWT headers joined by dashes', megabyteOf('eyJ-'), unchanged],
    ['JWT header candidates, then a token without a signature', megabyteOf('eyJ-', 'aaaaaaaa.eyJbbbbbbbb. '), unchanged],
    ['private key headers without PRIVATE KEY', `-----BEGIN ${'A '.repeat(MB / 2)}`, unchanged],
    ['Bearer then spaces', `Bearer${' '.repeat(MB)}`, unchanged],
    // A value of dotted words before a call is a secret (the value stops before the last dot).
    ['a secret name, then dotted words', `token=${'a.'.repeat(MB / 2)}(`, () => `token=${REDACTED}.(`],
    // An unterminated private key is redacted to the end.
    ['a private key header and END markers without PRIVATE KEY', `-----BEGIN RSA PRIVATE KEY-----${'-----END A '.repeat(MB / 11)}`, () => REDACTED],
    ['token prefixes joined by dashes', megabyteOf('glpat-sk-xoxb-', '_'), () => REDACTED],
    // Each pair of units is one quoted assignment: secret='secret='.
    ['quoted assignments without values', megabyteOf(`secret='`), (text) => `secret='${REDACTED}'`.repeat(text.length / 16)],
    // A URL password may hold a '/'; each '://' must not rescan the rest for an '@'.
    ['schemes with an empty user and no @', megabyteOf('a://:'), unchanged],
    ['schemes, users and slashes without an @', megabyteOf('a://b:c/'), unchanged],
    ['curl, then -u options without a password', `curl${megabyteOf(' -u a')}`, unchanged],
    ['names ending in _pass without a value', megabyteOf('x_pass '), unchanged],
    ['mysql, then -p options without a password', `mysql${megabyteOf(' -p')}`, unchanged],
    // The rules for key bodies, typed and escaped assignments, options and encoded URLs.
    ['a base64 run, then a character that ends no line', megabyteOf('Aa0+', '!'), unchanged],
    ['lines of base64 one short of a key line', megabyteOf(`${'Aa0+'.repeat(9)}Aa0\n`), unchanged],
    ['lines of base64, each with a character after it', megabyteOf(`${'Aa0+'.repeat(10)}!\n`), unchanged],
    ['one line of base64', megabyteOf('Aa0+'), () => REDACTED],
    ['a secret name and a type union without a value', `token: ${'a | '.repeat(MB / 4)}`, unchanged],
    ['a secret name then escapes without a quote', `password=${'\\'.repeat(MB)}`, () => `password=${REDACTED}`],
    ['secret options without a value', megabyteOf('--token '), unchanged],
    ['encoded schemes and users without a password', megabyteOf('a%3A%2F%2Fb%3A'), unchanged],
    ['an encoded URL user, then an unterminated password', `postgres%3A%2F%2Fa%3A${'%41'.repeat(MB / 3)}`, unchanged],
    ['a URL password of @', `a://b:${'@'.repeat(MB)}`, () => `a://b:${REDACTED}@`],
    ['curl, then continued -u options without a password', `curl${megabyteOf(' \\\n -u a')}`, unchanged],
    ['a Dockerfile ENV of a secret name, then a megabyte', megabyteOf('ENV token '), () => `ENV token ${REDACTED}`],
    ['secret elements without a closing tag', megabyteOf('<password>aaaa '), unchanged],
    ['a secret element, then a megabyte of spaces', `<token>abcd${' '.repeat(MB)}`, unchanged],
    ['secret names as first arguments without a value', megabyteOf("('token', '("), unchanged],
    // The credentials may hold a ':' (admin:hunter22): after the first header the rest is one value, redacted.
    ['authorization headers joined without a digit', megabyteOf('authorization:'), () => `authorization:${REDACTED}`],
    ['cookie headers without a value', megabyteOf(' cookie:'), unchanged],
    ['subscripted secret names without a value', megabyteOf('env["token"] = '), unchanged],
    ['a secret name, then words without an assignment', megabyteOf('token string '), unchanged],
  ];
  for (const [what, text, expected] of adversarial) {
    it(`runs in linear time on ~1 MB of ${what}`, () => {
      assert.ok(text.length >= MB);
      const out = redact(text);
      const want = expected(text);
      assert.ok(out === want, `${what}: got ${out.length} characters starting ${JSON.stringify(out.slice(0, 60))}, want ${want.length} starting ${JSON.stringify(want.slice(0, 60))}`);
    });
  }

  it('does not overflow the regex stack on an 8 MB run', () => {
    // A repeated group or an x{n,} quantifier costs V8 stack per repetition; these threw RangeError.
    const run = 8 * MB;
    assert.equal(redact(`token=${'a.'.repeat(run / 2)}`), `token=${REDACTED}`);
    assert.equal(redact(`ghp_${'a'.repeat(run)}_`), `ghp_${'a'.repeat(run)}_`);
    const header = `-----BEGIN ${'A '.repeat(run / 2)}`;
    assert.equal(redact(header), header);
  });

  it('still redacts a secret that follows a megabyte of hostile text', () => {
    const out = redact(`${megabyteOf('password-x.')} DB_PASSWORD=hunter2hunter2 and ${megabyteOf('eyJ-')} eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U`);
    assert.ok(!out.includes('hunter2hunter2'));
    assert.ok(!out.includes('dozjgNryP4J3jVmNHl0w5N'));
    assert.ok(out.endsWith(`eyJ- ${REDACTED}`), out.slice(-60));
  });
});

describe('capture: redaction keeps what it redacted', () => {
  const cases: [string, string][] = [
    ['export DB_PASSWORD=hunter2hunter2', `export DB_PASSWORD=${REDACTED}`],
    ['my.app-api_key: abcd1234', `my.app-api_key: ${REDACTED}`],
    ['--.client-secret="s3cr3t-value"', `--.client-secret="${REDACTED}"`],
    ["'private_key' : 'abcdefgh'", `'private_key' : '${REDACTED}'`],
    ['tokenpasswordtoken = zzzz9999', `tokenpasswordtoken = ${REDACTED}`],
    ['token = getToken(); auth: this.auth', 'token = getToken(); auth: this.auth'],
    ['pwd=abc', 'pwd=abc'],
    ['x-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N--', `x-${REDACTED}--`],
    ['ab.eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N', `ab.${REDACTED}`],
    ['eyJab-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N', REDACTED],
    ['eyJshort.eyJzdWIiOiIx.dozjgNryP4', 'eyJshort.eyJzdWIiOiIx.dozjgNryP4'],
    ['-postgres://admin:pa55word@db', `-postgres://admin:${REDACTED}@db`],
    ['git+ssh://git:pa55word@host', `git+ssh://git:${REDACTED}@host`],
    // Runs of scheme characters that do not start at a word boundary are credentials too.
    ['x_postgres://admin:pa55word@db', `x_postgres://admin:${REDACTED}@db`],
    ['see https://example.com/a:b@c', 'see https://example.com/a:b@c'],
    // Secret shapes the rules once missed.
    ['REDIS_URL=redis://:Zq9redisPassw0rd@redis:6379/0', `REDIS_URL=redis://:${REDACTED}@redis:6379/0`],
    ['postgres://admin:Zq9pa/sswordX@db.example.com/app', `postgres://admin:${REDACTED}@db.example.com/app`],
    [
      'AccountName=acct;AccountKey=Zq9azureKEYabc0123456789+/==;EndpointSuffix=core.windows.net',
      `AccountName=acct;AccountKey=${REDACTED};EndpointSuffix=core.windows.net`,
    ],
    ['Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=Zq9busKey0123+/=', `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=${REDACTED}`],
    ['BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&sig=Zq9sig%2F', `BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=${REDACTED}`],
    ['SMTP_PASS=Zq9smtpPassValue', `SMTP_PASS=${REDACTED}`],
    ['db.pass: "Zq9dbPassValue"', `db.pass: "${REDACTED}"`],
    ['ran curl -u admin:Zq9curlPassword https://api.example.com', `ran curl -u admin:${REDACTED} https://api.example.com`],
    ["curl -s --user 'bob:Zq9curlPassword' https://x", `curl -s --user 'bob:${REDACTED}' https://x`],
    ['url: https://hooks.slack.com/services/T00AAAA0/B00BBBB0/XXZq9webhook', `url: https://hooks.slack.com/services/${REDACTED}`],
    ['stripe_webhook: whsec_Zq9StripeWebhookSecret0123', `stripe_webhook: ${REDACTED}`],
    ['HF_TOKEN hf_Zq9AbCdEfGhIjKlMnOpQrStUvWxYz0123 set', `HF_TOKEN ${REDACTED} set`],
    ['sendgrid SG.Zq9abcdefghijklmnopq.Zq9abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP sent', `sendgrid ${REDACTED} sent`],
    [`doctl auth init -t dop_v1_${'a1'.repeat(32)}`, `doctl auth init -t ${REDACTED}`],
    [`X-Shopify-Access-Token: shpat_${'f0'.repeat(16)}`, `X-Shopify-Access-Token: ${REDACTED}`],
    ['mysql -u root -pZq9mysqlPass app', `mysql -u root -p${REDACTED} app`],
    ['sshpass -p Zq9sshPass ssh deploy@host', `sshpass -p ${REDACTED} ssh deploy@host`],
    ['docker login -u me -p Zq9dockerPass registry.example.com', `docker login -u me -p ${REDACTED} registry.example.com`],
    // Look-alikes that are no secret: the word pass in prose and code, uid:gid, a port then a path,
    // the database after mysql's bare -p (which prompts), other programs' -p.
    ['mysql -u root -p app; psql -p 5432 app; ls -p; grep -p x', 'mysql -u root -p app; psql -p 5432 app; ls -p; grep -p x'],
    ['the tests pass; pass the value on; bypass: true; pass_through = True; passes: 1234', 'the tests pass; pass the value on; bypass: true; pass_through = True; passes: 1234'],
    ['docker run -u 1000:1000 app; curl --user-agent Foo:1 https://x', 'docker run -u 1000:1000 app; curl --user-agent Foo:1 https://x'],
    ['npm i --registry http://localhost:4873/@acme/pkg', 'npm i --registry http://localhost:4873/@acme/pkg'],
  ];
  for (const [text, expected] of cases) {
    it(`${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  it('names the rules that fire', () => {
    assert.deepEqual(secretKinds('DB_PASSWORD="hunter2hunter2"'), ['quoted secret assignment']);
    assert.deepEqual(secretKinds('nothing secret here'), []);
  });
});

describe('capture: secret shapes an audit found the rules missing', () => {
  const ghp = `ghp_${'Zq9aB'.repeat(7)}x`;
  const keyLine = 'QyNTUxOQAAACBZq9ROTATEDkeyBodyLineTWOxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';
  const cases: [string, string][] = [
    // Typed assignments: the type is not the value.
    ['const apiKey: string = "Zq9TsTypedSecretValue77";', `const apiKey: string = "${REDACTED}";`],
    ['API_KEY: str = "Zq9PyAnnotatedSecret77"', `API_KEY: str = "${REDACTED}"`],
    ["private readonly clientSecret: string | undefined = 'Zq9TsUnionSecret77';", `private readonly clientSecret: string | undefined = '${REDACTED}';`],
    ['API_TOKEN: Final[str] = "Zq9PyFinalSecret77"', `API_TOKEN: Final[str] = "${REDACTED}"`],
    ['const API_TOKEN: &str = "Zq9RustSecret77";', `const API_TOKEN: &str = "${REDACTED}";`],
    ['let authToken: String = Zq9UnquotedTypedSecret', `let authToken: String = ${REDACTED}`],
    ['apiKey := "Zq9GoShortAssignSecret77"', `apiKey := "${REDACTED}"`],
    ['API_TOKEN := Zq9MakeSecret77', `API_TOKEN := ${REDACTED}`],
    ["'password' => 'Zq9PhpArrowSecret77',", `'password' => '${REDACTED}',`],
    [':password => "Zq9RubyArrowSecret77"', `:password => "${REDACTED}"`],
    // ... and code is still code.
    ['const token: string = getToken(); password := os.Getenv("DB_PASSWORD")', 'const token: string = getToken(); password := os.Getenv("DB_PASSWORD")'],
    ['secret: c2VjcmV0LXZhbHVl=', `secret: ${REDACTED}`],
    // JSON escaped inside text.
    ['log line {\\"db_password\\": \\"hunter2-secret\\"}', `log line {\\"db_password\\": \\"${REDACTED}\\"}`],
    // URL credentials: a password holding '@', and a URL-encoded URL.
    ['postgres://admin:Zq9@Zq9After@db.example.com/x', `postgres://admin:${REDACTED}@db.example.com/x`],
    ['redirect=postgres%3A%2F%2Fadmin%3AZq9UrlEncodedSecret%40db.example.com%2Fapp', `redirect=postgres%3A%2F%2Fadmin%3A${REDACTED}%40db.example.com%2Fapp`],
    ['next=https%3A%2F%2Fexample.com%3A8080%2Fa%3Ab%40c', 'next=https%3A%2F%2Fexample.com%3A8080%2Fa%3Ab%40c'],
    // Command lines.
    ['curl -X POST https://api.example.com/v1/admin \\\n  -u admin:Zq9CurlContinuation \\\n  -d @body.json', `curl -X POST https://api.example.com/v1/admin \\\n  -u admin:${REDACTED} \\\n  -d @body.json`],
    ['docker run \\\n  -u 1000:1000 app', 'docker run \\\n  -u 1000:1000 app'],
    ['mycli login --password Zq9SpacedFlagSecret --user bob', `mycli login --password ${REDACTED} --user bob`],
    ["kubectl get pods --token 'Zq9KubeToken77'", `kubectl get pods --token ${REDACTED}`],
    ['echo $PW | docker login --password-stdin registry.example.com; psql --no-password app', 'echo $PW | docker login --password-stdin registry.example.com; psql --no-password app'],
    ['aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCYZq9AWSCLI', `aws configure set aws_secret_access_key ${REDACTED}`],
    ['npm config set //registry.npmjs.org/:_authToken Zq9NpmAuthToken77', `npm config set //registry.npmjs.org/:_authToken ${REDACTED}`],
    ['aws configure set region us-east-1', 'aws configure set region us-east-1'],
    // Token boundaries: '_' is a word character, so \b did not separate it.
    ['exports/AKIAIOSFODNN7EXAMPLE_accessKeys.csv', `exports/${REDACTED}_accessKeys.csv`],
    ['aws_AKIAIOSFODNN7EXAMPLE', `aws_${REDACTED}`],
    [`saved_${ghp}_old.txt`, `saved_${REDACTED}_old.txt`],
    ['fooAKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPLEx pass_ASIAPACIFIC_REGION', 'fooAKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPLEx pass_ASIAPACIFIC_REGION'],
    // A line that is wholly a long base64 run: a private key's body without its BEGIN line.
    [`    ${keyLine}`, `    ${REDACTED}`],
    // Lines of a key's body in a row are one block, with its short last line; such a line needs no
    // digit in a block (a key is wrapped into several), which a lone line does.
    [`ssh_key: |\n  ${keyLine}\n  ${keyLine}==\nuser: deploy`, `ssh_key: |\n  ${REDACTED}\nuser: deploy`],
    [`key: |\n  ${'QyNTUxOQAAACBoldOLDkeyBODYlineTWO'.repeat(2)}\n  ${'AAAEDoldOLDkeyBODYlineTHREE'.repeat(2)}\n  AAAEDoldTAIL==\nuser: deploy`, `key: |\n  ${REDACTED}\nuser: deploy`],
    ['averyLongCamelCaseIdentifierWithoutAnyDigitsAtAll', 'averyLongCamelCaseIdentifierWithoutAnyDigitsAtAll'],
    // ... but not a git sha, a long lowercase word, a path, or base64 inside other text.
    ['da39a3ee5e6b4b0d3255bfef95601890afd80709', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
    ['DA39A3EE5E6B4B0D3255BFEF95601890AFD80709', 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709'],
    ['averyveryverylonglowercaseidentifiernamewithdigits123', 'averyveryverylonglowercaseidentifiernamewithdigits123'],
    ['src/main/java/com/example/project/controller/UserController', 'src/main/java/com/example/project/controller/UserController'],
    [`const sample = "${keyLine}"`, `const sample = "${keyLine}"`],
    // Names.
    ['SLACK_APP=xapp-1-A0123456789-1234567890123-Zq9abcdef0123456789', `SLACK_APP=${REDACTED}`],
    ['ENCRYPTION_KEY=Zq9EncryptionKeyValue', `ENCRYPTION_KEY=${REDACTED}`],
    ['JWT_SIGNING_KEY=Zq9JwtSigningValue', `JWT_SIGNING_KEY=${REDACTED}`],
    ['this.signingKey = "Zq9SigningKeyValue"', `this.signingKey = "${REDACTED}"`],
    ['APP_KEY=base64:Zq9LaravelAppKey=', `APP_KEY=${REDACTED}`],
    ['signingKey = loadKey(); masterKey: this.keys.master', 'signingKey = loadKey(); masterKey: this.keys.master'],
    ['const cryptoKey = await crypto.subtle.importKey(); let accessToken: string | null = null; token = await getToken()', 'const cryptoKey = await crypto.subtle.importKey(); let accessToken: string | null = null; token = await getToken()'],
    [
      'primary_key = "user_id"; foreign_key: \'author_id\'; sort_key = "created_at"; keyboard = "qwerty-layout"; KEY_UP = "ArrowUp"; hotkey = "ctrl+shift+p"; dedupe_key: "import:abc"; cacheKey = "user:1234"',
      'primary_key = "user_id"; foreign_key: \'author_id\'; sort_key = "created_at"; keyboard = "qwerty-layout"; KEY_UP = "ArrowUp"; hotkey = "ctrl+shift+p"; dedupe_key: "import:abc"; cacheKey = "user:1234"',
    ],
    ['FROM node:20\nENV DB_PASSWORD Zq9DockerEnvSecret\nENV NODE_ENV production', `FROM node:20\nENV DB_PASSWORD ${REDACTED}\nENV NODE_ENV production`],
    // Subscripts, compound and Go-typed assignments.
    ['os.environ["OPENAI_API_KEY"] = "Zq9EnvironSecret77"', `os.environ["OPENAI_API_KEY"] = "${REDACTED}"`],
    ["config['password'] = 'Zq9ConfigSecret77'", `config['password'] = '${REDACTED}'`],
    ['ENV["DB_PASSWORD"] ||= "Zq9RubyDefault77"; token ??= "Zq9JsDefault77"', `ENV["DB_PASSWORD"] ||= "${REDACTED}"; token ??= "${REDACTED}"`],
    ['var apiKey string = "Zq9GoTypedSecret77"', `var apiKey string = "${REDACTED}"`],
    ['password == "hunter2" and token in ("a", "b"); if password is None: raise', 'password == "hunter2" and token in ("a", "b"); if password is None: raise'],
    ['<input type="password" name="password" id="password" required>', '<input type="password" name="password" id="password" required>'],
    // A token's start: '_' is a word character.
    ['my_sk-proj-Zq9abcdefghijklmnopqrstuvwxyz', `my_${REDACTED}`],
    ['task-abcdefghijklmnopqrstuvwxyz123 and risk-abcdefghijklmnopqrstuvwxyz', 'task-abcdefghijklmnopqrstuvwxyz123 and risk-abcdefghijklmnopqrstuvwxyz'],
    // XML and HTML.
    ['<password>Zq9MavenSecret77</password>', `<password>${REDACTED}</password>`],
    ['<db.password encrypted="no"> Zq9TomcatSecret77 </db.password>', `<db.password encrypted="no"> ${REDACTED}</db.password>`],
    ['<add key="ApiKey" value="Zq9AppSettingsSecret" />', `<add key="ApiKey" value="${REDACTED}" />`],
    ['<input name="password" value="Zq9FormSecret77">', `<input name="password" value="${REDACTED}">`],
    // A secret named as a call's first argument, but not a list of names.
    ["localStorage.setItem('token', 'Zq9StorageToken77'); os.getenv(\"API_KEY\", \"Zq9DefaultKey77\")", `localStorage.setItem('token', '${REDACTED}'); os.getenv("API_KEY", "${REDACTED}")`],
    ["pick('token', 'password')", "pick('token', 'password')"],
    // Headers.
    ['Authorization: token ghx_Zq9GithubStyle1234', `Authorization: token ${REDACTED}`],
    ["headers: { 'Authorization': 'Zq9NoScheme1234abcd' }", `headers: { 'Authorization': '${REDACTED}' }`],
    ['authorization: required everywhere for admins', 'authorization: required everywhere for admins'],
    ['Cookie: session=Zq9SessionCookie77; theme=dark', `Cookie: session=${REDACTED}; theme=${REDACTED}`],
    ['Set-Cookie: sid=Zq9SetCookie77; Path=/; SameSite=Lax; HttpOnly', `Set-Cookie: sid=${REDACTED}; Path=/; SameSite=Lax; HttpOnly`],
    ['the cookie: it is a small file', 'the cookie: it is a small file'],
  ];
  for (const [text, expected] of cases) {
    it(`${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  it('carries curl over a continuation line in a diff side', () => {
    const lines = ['curl -X POST https://api.example.com/v1/admin \\', '  -u admin:Zq9CurlLineSecret \\', '  -d @body.json', 'docker run \\', '  -u 1000:1000 app'];
    assert.deepEqual(redactLines(lines), ['curl -X POST https://api.example.com/v1/admin \\', `  -u admin:${REDACTED} \\`, '  -d @body.json', 'docker run \\', '  -u 1000:1000 app']);
  });

  it('redacts the body lines of a private key in a diff side without its BEGIN and END lines', () => {
    // A key rotated in a YAML file: a diff with one line of context holds only body lines.
    const removed = [`    ${'QyNTUxOQAAACBoldOLDkeyBODYlineTWO'.repeat(2)}`, `    ${'AAAEDoldOLDkeyBODYlineTHREE'.repeat(2)}`, '    AAAEDoldTAIL=='];
    assert.deepEqual(redactLines(['  ssh_key: |', ...removed, '  user: deploy']), ['  ssh_key: |', `    ${REDACTED}`, '  user: deploy']);
    assert.deepEqual(redactLines([`    ${keyLine}`, '  user: deploy']), [`    ${REDACTED}`, '  user: deploy']);
  });

  it('redacts a private key given one line per list item, its short last line too', () => {
    const facts = ['-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUZq9FactKeyBodyLineOne', 'AAAEDZq9short==', '-----END OPENSSH PRIVATE KEY-----', 'deploys over port 22'];
    assert.deepEqual(cleanList(facts, 'facts'), [REDACTED, 'deploys over port 22']);
    assert.deepEqual(cleanList(['b3BlbnNzaC1rZXktdjEAAAAABG5vbmUZq9FactKeyBodyLineOne', 'two\nlines'], 'facts'), [REDACTED, 'two\nlines']);
  });

  it('treats credential files as secret paths', () => {
    for (const f of ['.netrc', 'home/me/_netrc', 'C:\\Users\\me\\_netrc', '.pgpass', 'home/me/.git-credentials', 'deploy/.htpasswd', 'conf/.HTPASSWD']) assert.ok(isSecretPath(f), f);
    for (const f of ['.npmrc', 'docs/netrc.md', 'src/pgpass.ts', '.gitignore', 'git-credentials.md', 'docs/htpasswd.md', '.htaccess']) assert.ok(!isSecretPath(f), f);
  });
});

describe('capture: redaction of JSON (the request log)', () => {
  it('redacts a value whose key names a secret, and a secret used as a key', () => {
    const args = { prompt: 'how do we deploy?', db_password: 'Zq9plainAuditSecretValue', nested: { apiKey: ['Zq9arrayItemSecret'] }, AKIAAUDITKEYNAME1234: 1, max_tokens: 12 };
    const out = JSON.parse(redactJson(JSON.stringify(args))) as Record<string, unknown>;
    assert.equal(out.prompt, 'how do we deploy?');
    assert.equal(out.db_password, REDACTED);
    assert.deepEqual(out.nested, { apiKey: [REDACTED] });
    // Numbers are kept: token counts are not tokens.
    assert.equal(out.max_tokens, 12);
    const keys = Object.keys(out);
    assert.ok(!keys.some((k) => k.includes('AKIA')), keys.join(', '));
    assert.equal(out[redactKey('AKIAAUDITKEYNAME1234')], 1);
  });

  it('keeps a key named __proto__ as a key', () => {
    assert.equal(redactJson('{"__proto__":{"a":"b"}}'), '{"__proto__":{"a":"b"}}');
  });
});

describe('capture: identifiers with a secret', () => {
  it('keep their identity with the secret digested away', () => {
    const a = 'sess-AKIAABCDEFGHIJKLMNOP';
    const b = 'sess-AKIAABCDEFGHIJKLMNOQ';
    assert.equal(redactKey('feature/login'), 'feature/login');
    assert.match(redactKey(a), /^redacted-[0-9a-f]{24}$/);
    assert.equal(redactKey(a), redactKey(a));
    assert.notEqual(redactKey(a), redactKey(b));
    assert.ok(!redactKey(a).includes('AKIA'));
  });
});

describe('capture: secrets this process holds', () => {
  it('are redacted whatever their shape while registered', () => {
    const key = 'plainlookingvalue1234567';
    assert.equal(redact(`use ${key} here`), `use ${key} here`);
    const forget = registerSecret(key);
    assert.equal(redact(`use ${key} here and ${key}`), `use ${REDACTED} here and ${REDACTED}`);
    forget();
    assert.equal(redact(`use ${key} here`), `use ${key} here`);
    registerSecret('short')();
    assert.equal(redact('a short word'), 'a short word');
  });

  it('stay redacted until every holder removed them, each removal counted once', () => {
    const key = 'sharedholdervalue12345';
    const first = registerSecret(key);
    const second = registerSecret(key);
    first();
    first();
    assert.equal(redact(`use ${key}`), `use ${REDACTED}`);
    second();
    assert.equal(redact(`use ${key}`), `use ${key}`);
  });
});

describe('capture: secret shapes a second audit found the rules missing', () => {
  const cases: [string, string][] = [
    // A value with a dot between letters is a secret when digits are mixed into it or a token's
    // prefix starts it; a member chain of names without digits, or one on a known receiver, is code.
    ['export VAULT_TOKEN=hvs.CAESIZq9VaultTokenBody0123456789abcdef', `export VAULT_TOKEN=${REDACTED}`],
    ['VAULT_TOKEN=s.Zq9LegacyVaultToken01', `VAULT_TOKEN=${REDACTED}`],
    ['DOPPLER_TOKEN=dp.st.prd.Zq9DopplerTokenBody0123456789', `DOPPLER_TOKEN=${REDACTED}`],
    ['TFE_TOKEN=Zq9TfcTokenHead.atlasv1.Zq9TfcTokenTail0123456789abcdef', `TFE_TOKEN=${REDACTED}`],
    ['password=Zq9pass.Word', `password=${REDACTED}`],
    ['secret_key: Zq9abc.DefGhi', `secret_key: ${REDACTED}`],
    ['curl -H "X-Vault-Token: hvs.Zq9VaultHeaderTok01" https://vault:8200/v1/secret', `curl -H "X-Vault-Token: ${REDACTED}" https://vault:8200/v1/secret`],
    ['password = this.password; token = req.headers.token; apiKey: config.apiKey; secret = settings.SECRET_KEY', 'password = this.password; token = req.headers.token; apiKey: config.apiKey; secret = settings.SECRET_KEY'],
    ['password=os.environ.get("DB_PASSWORD"); token = config.db2Token; auth: self.auth_v2', 'password=os.environ.get("DB_PASSWORD"); token = config.db2Token; auth: self.auth_v2'],
    // Credentials in config files.
    ['{"auths":{"https://index.docker.io/v1/":{"auth":"Zq9dXNlcjpzM2NyM3RQYXNzd29yZA=="}}}', `{"auths":{"https://index.docker.io/v1/":{"auth":"${REDACTED}"}}}`],
    ['//artifactory.example.com/api/npm/:_auth=Zq9dXNlcjpwYXNzd29yZDEyMw==', `//artifactory.example.com/api/npm/:_auth=${REDACTED}`],
    ['_auth = Zq9dXNlcjpwYXNzd29yZDEyMw==', `_auth = ${REDACTED}`],
    ['auth: required; "auth": "oauth2"', 'auth: required; "auth": "oauth2"'],
    ['AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYZq9AWSPAIR', `${REDACTED}:${REDACTED}`],
    ['bob,,AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYZq9AWSCSV', `bob,,${REDACTED},${REDACTED}`],
    ['twilio AC0123456789abcdef0123456789abcdef:Zq9f0123456789abcdef0123456789ab', `twilio AC0123456789abcdef0123456789abcdef:${REDACTED}`],
    [
      'apiVersion: v1\nkind: Secret\ndata:\n  DATABASE_URL: Zq9cG9zdGdyZXM6Ly9hZG1pbjpacTlAZGIvYXBw\n  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2Zq9TLSKEY\n  .dockerconfigjson: eyJhdXRocyI6e30Zq9DCJ==\nmetadata:\n  name: db\n',
      `apiVersion: v1\nkind: Secret\ndata:\n  DATABASE_URL: ${REDACTED}\n  tls.key: ${REDACTED}\n  .dockerconfigjson: ${REDACTED}\nmetadata:\n  name: db\n`,
    ],
    ['kind: Secret\nstringData:\n  config.yaml: |\n    user: admin\n    password: Zq9InBlock\n  plain: Zq9Plain\n', `kind: Secret\nstringData:\n  config.yaml: |\n    ${REDACTED}\n    ${REDACTED}\n  plain: ${REDACTED}\n`],
    ['{\n  "data": {\n    "DATABASE_URL": "Zq9JsonSecretData",\n    "b": "Zq9c"\n  },\n  "kind": "Secret"\n}', `{\n  "data": {\n    "DATABASE_URL": "${REDACTED}",\n    "b": "${REDACTED}"\n  },\n  "kind": "Secret"\n}`],
    ['kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n', 'kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n'],
    ['env:\n  - name: DB_PASSWORD\n    value: Zq9K8sEnvSecret\n  - name: LOG_LEVEL\n    value: debug\n', `env:\n  - name: DB_PASSWORD\n    value: ${REDACTED}\n  - name: LOG_LEVEL\n    value: debug\n`],
    ['"environment": [{"name": "DB_PASSWORD", "value": "Zq9EcsEnvSecret"}, {"name": "PORT", "value": "80"}]', `"environment": [{"name": "DB_PASSWORD", "value": "${REDACTED}"}, {"name": "PORT", "value": "80"}]`],
    ['- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}', '- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}'],
    ['db:\n  password: |\n    Zq9YamlBlockSecret\n    Zq9SecondLine\n  user: app\n', `db:\n  password: |\n    ${REDACTED}\n  user: app\n`],
    ['credentials:\n  username: bob\n  password: Zq9Nested', `credentials:\n  username: bob\n  password: ${REDACTED}`],
    [
      'variable "db_password" {\n  type    = string\n  default = "Zq9TfDefaultSecret"\n}\nvariable "region" {\n  default = "eu-west-1"\n}',
      `variable "db_password" {\n  type    = string\n  default = "${REDACTED}"\n}\nvariable "region" {\n  default = "eu-west-1"\n}`,
    ],
    [
      'variable "api_token" {\n  description = "a {braced} note"\n  default = "Zq9Tf{Braced}Secret"\n}',
      `variable "api_token" {\n  description = "a {braced} note"\n  default = "${REDACTED}"\n}`,
    ],
    ['machine api.github.com login bob password Zq9NetrcPassword', `machine api.github.com login bob password ${REDACTED}`],
    ['machine api.github.com\n  login bob\n  password Zq9NetrcMultiLine', `machine api.github.com\n  login bob\n  password ${REDACTED}`],
    ['db.example.com:5432:app:admin:Zq9PgPassFileLine', `db.example.com:5432:app:admin:${REDACTED}`],
    ['jdbc:oracle:thin:scott/Zq9OraclePassword@db.example.com:1521:orcl', `jdbc:oracle:thin:scott/${REDACTED}@db.example.com:1521:orcl`],
    ['sqlplus -s scott/Zq9SqlPlusPw@orcl; sqlplus / as sysdba', `sqlplus -s scott/${REDACTED}@orcl; sqlplus / as sysdba`],
    ['https://acct.blob.core.windows.net/c/b.txt?sv=2021-06-08&sp=r&sig=Zq9SasSig0123456789abcdef%2Bghij%3D&se=2030-01-01', `https://acct.blob.core.windows.net/c/b.txt?sv=2021-06-08&sp=r&sig=${REDACTED}&se=2030-01-01`],
    // Command lines and code.
    ['redis-cli -h cache -p 6379 -a Zq9RedisPassword', `redis-cli -h cache -p 6379 -a ${REDACTED}`],
    ['sqlcmd -S db -U sa -P Zq9SqlCmdPassword -Q "select 1"', `sqlcmd -S db -U sa -P ${REDACTED} -Q "select 1"`],
    ['mongosh --host db -u admin -p Zq9MongoPassword', `mongosh --host db -u admin -p ${REDACTED}`],
    ['twine upload -u __token__ -p Zq9TwinePassword dist/*', `twine upload -u __token__ -p ${REDACTED} dist/*`],
    ['htpasswd -b .htpasswd admin Zq9HtpasswdPass; htpasswd -nbB admin Zq9HtNoFile; htpasswd -c .htpasswd admin', `htpasswd -b .htpasswd admin ${REDACTED}; htpasswd -nbB admin ${REDACTED}; htpasswd -c .htpasswd admin`],
    ['requests.get(url, auth=("admin", "Zq9RequestsAuthPw"))', `requests.get(url, auth=("admin", "${REDACTED}"))`],
    ['session.auth = HTTPBasicAuth("admin", "Zq9BasicAuthPw")', `session.auth = HTTPBasicAuth("admin", "${REDACTED}")`],
    ['const apiKey = process.env.API_KEY || "Zq9FallbackApiKey";', `const apiKey = process.env.API_KEY || "${REDACTED}";`],
    ["password = os.getenv(\"DB_PASSWORD\") or 'Zq9PyFallback'", `password = os.getenv("DB_PASSWORD") or '${REDACTED}'`],
    ['DB_PASSWORD: ${DB_PASSWORD:-Zq9ComposeDefault}', `DB_PASSWORD: \${DB_PASSWORD:-${REDACTED}}`],
    ['$cred = ConvertTo-SecureString "Zq9PsSecurePass" -AsPlainText -Force', `$cred = ConvertTo-SecureString "${REDACTED}" -AsPlainText -Force`],
    ['curl -H "Authorization: Basic dXNlcjpwYXNz" https://x', `curl -H "Authorization: Basic ${REDACTED}" https://x`],
    // Tokens known by their prefix.
    ['gitlab-runner register --url https://gitlab.example.com glrt-Zq9RunnerTok0123456789ab', `gitlab-runner register --url https://gitlab.example.com ${REDACTED}`],
    ['deploy token gldt-Zq9DeployTok0123456789ab', `deploy token ${REDACTED}`],
    ['refresh with xoxe-1-Zq9SlackRotating0123456789abcdefghijklmnop', `refresh with ${REDACTED}`],
    ['upload token pypi-AgEIcHlwaS5vcmcCJDZq9PypiTokenBody0123456789abcdef', `upload token ${REDACTED}`],
    ['echo dckr_pat_Zq9DockerHubPat0123456789ab | docker login -u me --password-stdin', `echo ${REDACTED} | docker login -u me --password-stdin`],
    ['client secret GOCSPX-Zq9GoogleOauthSecret01234', `client secret ${REDACTED}`],
    ['access ya29.a0AfH6SMBZq9GoogleAccessTok0123456789abcdefghijklmnop', `access ${REDACTED}`],
    ['twilio key SK0123456789abcdef0123456789abcdef', `twilio key ${REDACTED}`],
    ['databricks token dapi0123456789abcdef0123456789abcdef', `databricks token ${REDACTED}`],
    ['jira token ATATT3xFfGF0Zq9AtlassianTok0123456789abcdefghijklmnopqrstuvwxyz', `jira token ${REDACTED}`],
    ['postman PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01', `postman ${REDACTED}`],
    ['grafana glsa_Zq9GrafanaSaToken0123456789abcdef_0a1b2c3d', `grafana ${REDACTED}`],
    ['newrelic NRAK-Zq9NEWRELICKEY0123456789ABCD', `newrelic ${REDACTED}`],
    ['linear lin_api_Zq9LinearApiKey0123456789abcdefghijklmnopqrst', `linear ${REDACTED}`],
    ['supabase sbp_0123456789abcdef0123456789abcdef01234567', `supabase ${REDACTED}`],
    ['AGE-SECRET-KEY-1QQ9AGESECRETKEYBODYQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ', REDACTED],
    ['mailgun key-0123456789abcdef0123456789abcdef', `mailgun ${REDACTED}`],
    ['DISCORD bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.Zq9DiscordBotSig0123456789abcd', `DISCORD bot ${REDACTED}`],
    // ... and their look-alikes.
    ['hvs.computeHalfVectorSpace(); key-value store; SKIPPED_TESTS_IN_THIS_RUN_ARE_LISTED; the machine is password protected', 'hvs.computeHalfVectorSpace(); key-value store; SKIPPED_TESTS_IN_THIS_RUN_ARE_LISTED; the machine is password protected'],
    ['src/a.ts:12:5: error: foo; 10:30:00:12:34', 'src/a.ts:12:5: error: foo; 10:30:00:12:34'],
    // Escaped quotes inside a quoted value, and an unquoted value with a space.
    ['DB_PASSWORD="Zq9a\\"Zq9TailOfPassword"', `DB_PASSWORD="${REDACTED}"`],
    ['{"password":"Zq9a\\"Zq9TailOfJsonPassword", "user": "bob"}', `{"password":"${REDACTED}", "user": "bob"}`],
    ['body={\\"client_secret\\": \\"Zq9a\\\\\\"Zq9TailEscaped\\", \\"user\\": \\"bob\\"}', `body={\\"client_secret\\": \\"${REDACTED}\\", \\"user\\": \\"bob\\"}`],
    ['token = "it\'s-Zq9-secret"', `token = "${REDACTED}"`],
    ['SMTP_PASSWORD=Zq9first Zq9SecondHalfOfPassword', `SMTP_PASSWORD=${REDACTED}`],
    ['GITHUB_TOKEN=Zq9abc123 gh release create v1', `GITHUB_TOKEN=${REDACTED} gh release create v1`],
  ];
  for (const [text, expected] of cases) {
    it(`${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  it('gives one line out for each line in, null where a private key spanning lines took it', () => {
    const lines = ['const a = 1;', '-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAzq9KeyBodyLineOne', '-----END RSA PRIVATE KEY-----', 'password = "Zq9Secret123"'];
    assert.deepEqual(redactEachLine(lines), ['const a = 1;', REDACTED, null, null, `password = "${REDACTED}"`]);
    assert.deepEqual(redactLines(lines), ['const a = 1;', REDACTED, `password = "${REDACTED}"`]);
  });

  it('carries an assignment over to its value on the next line in a diff side', () => {
    assert.deepEqual(redactLines(['export const DATABASE_PASSWORD =', '  "Zq9PrettierWrappedSecret-0123456789";', 'const region = "eu-west-1";']), [
      'export const DATABASE_PASSWORD =',
      `  "${REDACTED}";`,
      'const region = "eu-west-1";',
    ]);
    assert.deepEqual(redactLines(['env:', '  - name: DB_PASSWORD', '    value: Zq9K8sEnvSecret']), ['env:', '  - name: DB_PASSWORD', `    value: ${REDACTED}`]);
    assert.deepEqual(redactLines(['db:', '  password: |', '    Zq9YamlBlockSecret', '  user: app']), ['db:', '  password: |', `    ${REDACTED}`, '  user: app']);
  });

  it('redacts the body lines of a key in a pasted diff, each line after its mark', () => {
    const lines = [
      ' AAAEDcontextLineOfTheKeyBody0123456789abcdefghijABCDEFGHIJKLMNOPQRS',
      '-MIIEpAIBAAKCAQEAZq9OldKeyBodyLineOne0123456789abcdefghijABCDEFGHIJ',
      '-Zq9OldKeyBodyLineTwo0123456789abcdefghijABCDEFGHIJKLMNOPQRSTUVWXYZab',
      '+MIIEowIBAAKCAQEAZq9NewKeyBodyLineOne0123456789abcdefghijABCDEFGHIJ',
    ];
    assert.equal(redact(['diff --git a/k b/k', '@@ -12,4 +12,3 @@', ...lines].join('\n')), `diff --git a/k b/k\n@@ -12,4 +12,3 @@\n ${REDACTED}`);
    assert.deepEqual(redactLines(lines.slice(1, 3)), [`-${REDACTED}`]);
    assert.equal(redact(lines[3]), `+${REDACTED}`);
  });

  it('keeps settings about a secret and prose that only looks like a token', () => {
    const kept = [
      'max_tokens: 4096; maxTokens: 4096; tokens: 1500; token_type: Bearer; TOKEN_TTL=3600s; password_hash: bcrypt; SESSION_SECRET_ROTATION=weekly',
      '<div class="sk-fading-circle-container"></div> merged sk-1234-add-login-redirect-for-sso',
      'Basic internationalization support; Token authentication; basic usage',
    ];
    for (const text of kept) assert.equal(redact(text), text);
    assert.equal(redactKey('feature/sk-1234-add-login-redirect'), 'feature/sk-1234-add-login-redirect');
    // A secret under such a name, or a secret's shape after sk-, still goes.
    assert.equal(redact('password_hash: $2b$12$Zq9abcdefghijkl; password: 123456; token_type: Zq9weird1'), `password_hash: ${REDACTED}; password: ${REDACTED}; token_type: ${REDACTED}`);
    assert.equal(redact(`sk-or-v1-${'0123456789abcdef'.repeat(4)} sk-${'0123456789abcdef'.repeat(2)}`), `${REDACTED} ${REDACTED}`);
  });

  it('redacts JSON values under credential names whole, and keeps settings about them', () => {
    const args = { prompt: 'why?', headers: { authorization: 'token Zq9GhStyleLoggedTok01', Cookie: 'sid=Zq9CookieLoggedSess01' }, auth: { user: 'bob' }, token_type: 'Bearer', max_tokens: '4096' };
    const out = JSON.parse(redactJson(JSON.stringify(args))) as Record<string, unknown>;
    assert.deepEqual(out, { prompt: 'why?', headers: { authorization: REDACTED, Cookie: REDACTED }, auth: { user: REDACTED }, token_type: 'Bearer', max_tokens: '4096' });
  });

  it('redacts JSON nested thousands deep without overflowing the stack', () => {
    for (const depth of [5000, 100_000]) {
      const deep = `{"prompt":"x","a":${'['.repeat(depth)}"password=Zq9DeepSecret"${']'.repeat(depth)}}`;
      assert.equal(redactJson(deep), `{"prompt":"x","a":${'['.repeat(depth)}"password=${REDACTED}"${']'.repeat(depth)}}`);
    }
  });
});

describe('capture: the rules added for the second audit on hostile input', () => {
  // Each rule's shape, a megabyte of it, in well under a second (the bound is generous: a
  // quadratic rule takes minutes); most hold no secret, a few are one secret or a known series.
  const unchanged = (text: string) => text;
  const dataLines = Math.floor(MB / 7);
  const blockLines = MB / 4;
  const hostile: [string, string, (text: string) => string][] = [
    ['a cookie without "=" after a ";"', `Cookie: a=b;${'x'.repeat(MB)}`, (t) => t.replace('a=b', `a=${REDACTED}`)],
    ['a Set-Cookie attribute run', `Set-Cookie: sid=1; ${'A0'.repeat(MB / 2)}`, (t) => t.replace('sid=1', `sid=${REDACTED}`)],
    ['key ids joined by ":"', megabyteOf('AKIAIOSFODNN7EXAMPLE:'), (t) => t.replaceAll('AKIAIOSFODNN7EXAMPLE', REDACTED)],
    ['a key id, then a long word', `AKIAIOSFODNN7EXAMPLE:${'a'.repeat(MB)}`, (t) => t.replace('AKIAIOSFODNN7EXAMPLE', REDACTED)],
    ['dotted words before atlasv1', megabyteOf('aaaaaaaa.atlasv1.'), unchanged],
    ['a Vault prefix, then a run without a digit', `hvs.${'a'.repeat(MB)}`, unchanged],
    ['token prefixes without a body', megabyteOf('hvs.dp.st.SKdapikey-M-'), unchanged],
    ['Discord token parts without a signature', megabyteOf('MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.'), unchanged],
    ['a PyPI prefix, then a megabyte', megabyteOf('pypi-AgE'), () => REDACTED],
    ['redis-cli, then -a options without a password', `redis-cli${megabyteOf(' -a')}`, unchanged],
    ['sqlcmd, then -P options without a password', `sqlcmd${megabyteOf(' -P')}`, unchanged],
    ['htpasswd -b, then a megabyte of words', `htpasswd -b ${megabyteOf('a ')}`, (t) => t.replace('-b a a a', `-b a a ${REDACTED}`)],
    ['sqlplus users without a password', megabyteOf('sqlplus a/ '), unchanged],
    ['netrc machines without a password', megabyteOf('machine a login b '), unchanged],
    ['a pgpass line with a megabyte of password, then a word', `h:1:d:u:${'p'.repeat(MB)} x`, unchanged],
    ['sig= without a value', megabyteOf('&sig='), unchanged],
    ['Basic, then a megabyte of one word', `Basic ${'a'.repeat(MB)}`, unchanged],
    ['names and values without a value', megabyteOf('name: password\nvalue: "'), unchanged],
    ['an auth pair without a password', megabyteOf('auth=("a", '), unchanged],
    ['a megabyte of one word, then BasicAuth(', `${'x'.repeat(MB)}BasicAuth(`, unchanged],
    ['ConvertTo-SecureString without a string', megabyteOf('ConvertTo-SecureString '), unchanged],
    ['secret fallbacks without a closing quote', `token || "${'a'.repeat(MB)}`, unchanged],
    ['shell defaults without a closing brace', megabyteOf('${token:-a'), unchanged],
    ['auth: then a megabyte of capitals', `auth: ${'A'.repeat(MB)}`, unchanged],
    ['a Secret with a megabyte of data lines', `kind: Secret\ndata:\n${'  a: b\n'.repeat(dataLines)}`, () => `kind: Secret\ndata:\n${`  a: ${REDACTED}\n`.repeat(200)}${'  a: b\n'.repeat(dataLines - 200)}`],
    ['a Secret with a megabyte of data headers', `kind: Secret\n${megabyteOf('data:\n')}`, unchanged],
    ['block scalar headers without lines', megabyteOf('password: |\n'), unchanged],
    ['a block scalar of a megabyte of lines', `password: |\n${'  x\n'.repeat(blockLines)}`, () => `password: |\n  ${REDACTED}${'\n  x'.repeat(blockLines - 200)}\n`],
    ['Terraform variables without a default', megabyteOf('variable "token" {'), unchanged],
    ['a quoted value of escaped quotes, unclosed', `password="${'\\\\\\"'.repeat(MB / 4)}`, unchanged],
    ['an escaped quote, then escaped backslashes and quotes, unclosed', `password=\\"${'\\\\"'.repeat(MB / 3)}`, unchanged],
    ['a quoted value holding the other quote, unclosed', `token="${"a'".repeat(MB / 2)}`, unchanged],
    ['an unquoted secret, then a megabyte of random-looking words', `token=abcd${megabyteOf(' Aa1x')}`, (t) => `token=${REDACTED}${t.slice('token=abcd'.length + 8 * ' Aa1x'.length)}`],
    ['a secret name, then a receiver chain', `token=${'this.'.repeat(MB / 5)}`, () => `token=${REDACTED}`],
    ['diff-marked base64 lines, each with a character after it', megabyteOf(`-${'Aa0+'.repeat(10)}!\n`), unchanged],
    ['diff-marked base64 lines, every other one broken', megabyteOf(`+${'Aa0+'.repeat(10)}\n+${'Aa0+'.repeat(10)}!\n`), (t) => t.replaceAll(`+${'Aa0+'.repeat(10)}\n`, `+${REDACTED}\n`)],
    ['sk- joined by dashes', megabyteOf('sk-a-'), () => REDACTED],
  ];
  redactsHostileFast(hostile);

  it('redacts the lines of a diff side whole, then each, in well under a second', () => {
    // A quarter megabyte of short lines, each redacted alone as before; then the rules that span
    // lines run once over them joined, where a quadratic rule would show.
    const quarter = (line: string) => line.repeat(Math.ceil(MB / 4 / line.length)).split('\n');
    for (const side of [quarter('password =\n'), quarter('- name: DB_PASSWORD\n'), quarter('data:\nkind: Secret\n'), [`Cookie: a=b;${'x'.repeat(MB)}`]]) {
      const start = performance.now();
      const out = redactLines(side);
      const ms = performance.now() - start;
      assert.equal(out.length, side.length);
      assert.ok(ms < LINEAR_BOUND_MS, `${side[0].slice(0, 20)}: ${Math.round(ms)} ms`);
    }
  });
});

describe('capture: a private key given whole in base64 (kubeconfig client-key-data)', () => {
  const pem = (header: string) => `-----BEGIN ${header}-----\nMIIEpAIBAAKCAQEAwVx${'Qk9HVVNLRVlEQVRB'.repeat(20)}\n-----END ${header}-----\n`;
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const cert = b64('-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n');

  it('redacts base64 of a PEM private key under any name, and keeps a base64 certificate', () => {
    for (const header of ['RSA PRIVATE KEY', 'PRIVATE KEY', 'EC PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'ENCRYPTED PRIVATE KEY']) {
      const key = b64(pem(header));
      assert.equal(redact(`    client-key-data: ${key}`), `    client-key-data: ${REDACTED}`, header);
      assert.equal(redact(`helm install --set tls.pem=${key} app`), `helm install --set tls.pem=${REDACTED} app`, header);
      assert.equal(redact(`{"value": "${key}"}`), `{"value": "${REDACTED}"}`, header);
    }
    assert.equal(redact(`    client-certificate-data: ${cert}`), `    client-certificate-data: ${cert}`);
    assert.equal(redact(`    certificate-authority-data: ${cert}`), `    certificate-authority-data: ${cert}`);
  });

  it('redacts a kubeconfig in a diff side: the key goes, the certificates stay', () => {
    const key = b64(pem('RSA PRIVATE KEY'));
    const lines = ['users:', '- name: admin', '  user:', `    client-certificate-data: ${cert}`, `    client-key-data: ${key}`];
    assert.deepEqual(redactLines(lines), [...lines.slice(0, 4), `    client-key-data: ${REDACTED}`]);
  });

  it('redacts the value of a name ending in -key-data, _key_data or KeyData, and keeps look-alikes', () => {
    const value = 'Zq9KeyDataValue0123456789abcdefXYZ==';
    for (const name of ['client-key-data', 'CLIENT_KEY_DATA', 'tls_key_data', 'tlsKeyData', '"clientKeyData"', 'keyData']) {
      assert.equal(redact(`${name}: ${value}`), `${name}: ${REDACTED}`, name);
    }
    assert.equal(redact(`client-key-data="${value}"`), `client-key-data="${REDACTED}"`);
    for (const text of [`monkeyData: ${value}`, `certificate-authority-data: ${value}`, 'client-key-data: /etc/kubernetes/pki/admin.key', 'keyData: short']) assert.equal(redact(text), text);
  });

  const unchanged = (text: string) => text;
  const hostile: [string, string, (text: string) => string][] = [
    ['the base64 of "-----BEGIN" repeated, decoding to no key', `value: ${megabyteOf('LS0tLS1CRUdJTi')}`, unchanged],
    ['the base64 of "-----BEGIN" after each of a megabyte of base64 characters', `value: ${'A'.repeat(MB)}LS0tLS1CRUdJTi${'A'.repeat(64)}`, unchanged],
    ['key-data names without a value', megabyteOf('a-key-data'), unchanged],
    ['key-data names with a short value', megabyteOf('a-key-data: x '), unchanged],
    ['a megabyte of one name, then KeyData', `${'x'.repeat(MB)}KeyData`, unchanged],
    ['a key-data name, then a megabyte of a path', `client-key-data: ${'/a'.repeat(MB / 2)}.key`, unchanged],
    ['KeyData names joined by ":"', megabyteOf('aKeyData:'), unchanged],
  ];
  redactsHostileFast(hostile);
});
