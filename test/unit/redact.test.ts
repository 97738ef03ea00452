// Redaction on hostile input: every pattern must run in time linear in the text, and what it
// redacts must stay what it redacted before the patterns were rewritten for that.

import * as assert from 'node:assert/strict';
import { REDACTED, redact, redactJson, redactKey, registerSecret, secretKinds } from '../../src/core/capture/redact';

const MB = 1024 * 1024;

/** `unit` repeated to about one megabyte, then `tail`. */
function megabyteOf(unit: string, tail = ''): string {
  return unit.repeat(Math.ceil(MB / unit.length)) + tail;
}

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
