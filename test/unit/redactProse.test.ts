// Secrets given in prose and in Authorization headers, and public base64 that only looks like a
// key (a certificate, an image's data): each leak here went through redact() unchanged before,
// each look-alike must come through unchanged, and every new pattern runs in linear time.

import * as assert from 'node:assert/strict';
import { REDACTED, redact, redactEachLine, redactLines } from '../../src/core/capture/redact';

const MB = 1024 * 1024;

/** `unit` repeated to about one megabyte, then `tail`. */
function megabyteOf(unit: string, tail = ''): string {
  return unit.repeat(Math.ceil(MB / unit.length)) + tail;
}

describe('capture: secrets given in prose', () => {
  // [text, what it must become]: the secret goes, the words around it stay.
  const leaks: [string, string][] = [
    ['The database password is hunter2 for staging', `The database password is ${REDACTED} for staging`],
    ['login with user admin and password Sup3rS3cret!', `login with user admin and password ${REDACTED}`],
    ['the secret is: 9f8e7d6c5b4a', `the secret is: ${REDACTED}`],
    ['passwd hunter2', `passwd ${REDACTED}`],
    ['use passphrase "correct horse battery staple"', `use passphrase "${REDACTED}"`],
    ["password 'x y z' works", `password '${REDACTED}' works`],
    ['the password is letmein.', `the password is ${REDACTED}.`],
    ['set the token to Zq9abc123 now', `set the token to ${REDACTED} now`],
    ['the api key was a1b2c3d4e5, rotated since', `the api key was ${REDACTED}, rotated since`],
    ['DB_PASSWORD is hunter2 on staging', `DB_PASSWORD is ${REDACTED} on staging`],
    ['the apiKey is abcd1234efgh', `the apiKey is ${REDACTED}`],
    ['the client secret is Winter-2024', `the client secret is ${REDACTED}`],
    ['the PIN code is 4821', `the PIN code is ${REDACTED}`],
    ['the admin password is 12345678', `the admin password is ${REDACTED}`],
    ['a pass phrase of "open sesame"', `a pass phrase of "${REDACTED}"`],
    ['the password is `hunter2` there', `the password is \`${REDACTED}\` there`],
    ['the access key was changed to AbC9xYz8', `the access key was changed to ${REDACTED}`],
    ['password Sup3r(S3cret) for the vpn', `password ${REDACTED} for the vpn`],
    ['the password for the staging db is hunter2', `the password for the staging db is ${REDACTED}`],
    ['the token in the header is 3f2a9c1d, see logs', `the token in the header is ${REDACTED}, see logs`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  // Prose and code about a secret that holds none: an English or software word, a type, a
  // keyword, a call, a reference to where the secret is, a quantity, a parser's token.
  const kept = [
    'the password is required',
    'password is empty',
    'the token is expired',
    'the secret is stored in the keychain',
    'password is hashed with bcrypt',
    'token is null',
    'password: string',
    'token: string | undefined',
    'api_key: SecretStr',
    'password = getPassword()',
    'secret: process.env.SECRET',
    'token is invalid',
    'the password is too short',
    'the token was revoked and the secret is mounted at /var/run/secrets',
    'the access token is short-lived; the api key is read-only',
    'password is `undefined` until login; token is `null`',
    'the password is base64-encoded and the token is SHA-256 hashed, utf-8 only',
    'the secret is 256 bits; the token is 2048 bits long; valid for 3600 seconds',
    'the token is $GITHUB_TOKEN, or ${{ secrets.GITHUB_TOKEN }}, or GITHUB_TOKEN',
    'the password is "$DB_PASSWORD"',
    'pwd is /home/me/project; run pwd to check',
    'password (optional); password reset link; password manager',
    'the password must be at least 8 characters',
    'the password was changed to the new one',
    "SyntaxError: Unexpected token 'export'",
    'Unexpected token < in JSON at position 0',
    'the tokenizer is tiktoken; passwordless login is enabled; the secretary is Alice',
    'set max tokens to 4096',
    'kubectl get secret db-creds -o yaml',
    'password + salt; password == other',
    'the token in the header is expired; the password for each user is hashed',
    '- [Username and Password flow](https://docs.example.com/auth)',
    'the source argument for a token is `args[token.index]`',
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }
});

describe('capture: Authorization headers, whatever the credentials look like', () => {
  const leaks: [string, string][] = [
    ['Authorization: Bearer abc.def.ghi', `Authorization: Bearer ${REDACTED}`],
    ['Proxy-Authorization: Basic abc', `Proxy-Authorization: Basic ${REDACTED}`],
    ['authorization: token abcdef', `authorization: token ${REDACTED}`],
    ['Authorization: abc.def.ghi', `Authorization: ${REDACTED}`],
    ['Authorization: NTLM TlRMTVNTUAABAAAA', `Authorization: NTLM ${REDACTED}`],
    [
      'Authorization: Digest username="bob", realm="x", nonce="dcd98b71", response="6629fae49393a05397450978507c4ef1"',
      `Authorization: Digest ${REDACTED}`,
    ],
    ['{"Authorization": "Digest username=\\"bob\\", response=\\"6629fae4\\""}', `{"Authorization": "Digest ${REDACTED}"}`],
    [
      'Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=host;x-amz-date, Signature=5d672d79c15b1316',
      `Authorization: AWS4-HMAC-SHA256 ${REDACTED}`,
    ],
    ['curl -H "Authorization: Bearer abc" https://x', `curl -H "Authorization: Bearer ${REDACTED}" https://x`],
    ["xhr.setRequestHeader('Authorization', 'Bearer abc.def')", `xhr.setRequestHeader('Authorization', 'Bearer ${REDACTED}')`],
  ];
  for (const [text, expected] of leaks) {
    it(`redacts ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), expected);
    });
  }

  const kept = [
    'authorization: required everywhere for admins',
    'requests need authorization: see the docs',
    'headers: { Authorization: `Bearer ${token}` }',
    "'Authorization': 'Bearer ' + token",
    'Authorization: Bearer $GITHUB_TOKEN',
    'Authorization: Bearer <token>',
    'authorization: req.headers.authorization',
    'const authorization = `AWS4-HMAC-SHA256 Credential=${c.accessKeyId}/${scope}, SignedHeaders=${names}, Signature=${signature}`;',
    'if (authorization === undefined) delete headers.authorization;',
    "['Proxy-Authorization', [...h, `Proxy-Authorization: Bearer ${t}`]]",
  ];
  for (const text of kept) {
    it(`keeps ${JSON.stringify(text)}`, () => {
      assert.equal(redact(text), text);
    });
  }
});

describe('capture: public base64 is not a secret', () => {
  const body = ['MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ', 'RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD', 'Ow=='];
  const cert = ['-----BEGIN CERTIFICATE-----', ...body, '-----END CERTIFICATE-----'];
  const key = ['-----BEGIN PRIVATE KEY-----', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Zq9KeyBody01', '-----END PRIVATE KEY-----'];
  // An image's base64 as an encoder wraps it: lines of 76, then a shorter last one.
  const image = Buffer.from(Array.from({ length: 400 }, (_, i) => (i * 37) % 256)).toString('base64');
  const wrapped = image.match(/.{1,76}/g)!;

  it('keeps a certificate, in text, in a diff side and in JSON', () => {
    assert.equal(redact(cert.join('\n')), cert.join('\n'));
    assert.deepEqual(redactLines(cert), cert);
    const json = `{"ca": "${cert.join('\\n')}\\n", "password": "Zq9JsonSecret"}`;
    assert.equal(redact(json), `{"ca": "${cert.join('\\n')}\\n", "password": "${REDACTED}"}`);
  });

  it('still redacts a private key next to a certificate, and text inside a certificate', () => {
    const chain = [...cert, ...key, 'password: hunter2'];
    assert.equal(redact(chain.join('\n')), [...cert, REDACTED, `password: ${REDACTED}`].join('\n'));
    assert.deepEqual(redactEachLine(chain), [...cert, REDACTED, null, null, `password: ${REDACTED}`]);
    // A line that is not base64 ends the certificate: what follows is redacted as text.
    const broken = ['-----BEGIN CERTIFICATE-----', body[0], 'the password is hunter2', '-----END CERTIFICATE-----'];
    assert.equal(redact(broken.join('\n')), ['-----BEGIN CERTIFICATE-----', REDACTED, `the password is ${REDACTED}`, '-----END CERTIFICATE-----'].join('\n'));
    // A key's body lines without a header are still redacted, and base64 of a key in a data URI too.
    assert.equal(redact(`    ${key[1]}`), `    ${REDACTED}`);
    const pemKey = Buffer.from(`${key.join('\n')}\n`).toString('base64');
    assert.equal(redact(`src="data:image/png;base64,${pemKey}"`), `src="data:image/png;base64,${REDACTED}"`);
  });

  it("keeps an image's data wrapped over lines, and redacts a key's line after it", () => {
    const uri = ['<img src="data:image/png;base64,', ...wrapped.slice(0, -1), `${wrapped[wrapped.length - 1]}">`];
    assert.equal(redact(uri.join('\n')), uri.join('\n'));
    assert.deepEqual(redactLines(uri), uri);
    const then = [`data:image/png;base64,${wrapped[0]}`, ...wrapped.slice(1), key[1]];
    assert.equal(redact(then.join('\n')), [...then.slice(0, -1), REDACTED].join('\n'));
  });
});

describe('capture: the prose, header and public base64 rules on hostile input', () => {
  const unchanged = (text: string) => text;
  const certLines = Math.floor(MB / 65);
  const hostile: [string, string, (text: string) => string][] = [
    ['credential words and links without a value', megabyteOf('password is '), unchanged],
    ['credential words, then what they are for, without a link', megabyteOf('token for a b c '), unchanged],
    ['a credential word, a link and a megabyte of one word', `the password is ${'a'.repeat(MB)}`, () => `the password is ${REDACTED}`],
    ['a credential word, a link and a megabyte of short words joined', `the password is ${'a-'.repeat(MB / 2)}`, () => `the password is ${REDACTED}`],
    ['a credential word, then an unclosed quote', `password "${'a'.repeat(MB)}`, unchanged],
    ['credential words, then apostrophes', megabyteOf("token is '", 'x'), unchanged],
    ['a megabyte of one identifier ending in no credential word', `${'my_secret_token_'.repeat(MB / 16)} is abc123`, unchanged],
    ['Digest headers with an unclosed quote', `Authorization: Digest a="${'x'.repeat(MB)}`, (t) => t.replace('a=', REDACTED)],
    ['Digest headers of many parameters', `Authorization: Digest ${megabyteOf('a=b, ')}`, (t) => `Authorization: Digest ${REDACTED}${t.slice('Authorization: Digest '.length + 33 * 'a=b, '.length - 2)}`],
    ['a certificate of a megabyte of lines', `-----BEGIN CERTIFICATE-----\n${`${'Aa0+'.repeat(16)}\n`.repeat(certLines)}-----END CERTIFICATE-----`, unchanged],
    ['certificate headers without a body or an END line', megabyteOf('-----BEGIN CERTIFICATE-----\n'), unchanged],
    ['data URIs without data', megabyteOf('data:image/png;base64,'), unchanged],
    ['a data URI wrapped over a megabyte of lines', `data:image/png;base64,\n${`${'Aa0+'.repeat(19)}\n`.repeat(MB / 77)}`, unchanged],
  ];
  for (const [what, text, expected] of hostile) {
    it(`redacts ~1 MB of ${what} in well under a second`, () => {
      const start = performance.now();
      const out = redact(text);
      const ms = performance.now() - start;
      const want = expected(text);
      assert.ok(out === want, `${what}: got ${out.length} characters starting ${JSON.stringify(out.slice(0, 60))}, want ${want.length} starting ${JSON.stringify(want.slice(0, 60))}`);
      assert.ok(ms < 2000, `${what}: ${Math.round(ms)} ms`);
    });
  }
});
