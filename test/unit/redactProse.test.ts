// Secrets given in prose and in Authorization headers, and public base64 that only looks like a
// key (a certificate, an image's data): each leak here went through redact() unchanged before,
// each look-alike must come through unchanged, and every new pattern runs in linear time.

import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { REDACTED, redact, redactEachLine, redactLines } from '../../src/core/capture/redact';
import { MB, megabyteOf, redactsHostileFast } from './redactFixture';

/** The body lines of a fresh PKCS#8 RSA private key in PEM (without its BEGIN and END lines). */
function privateKeyBody(): string[] {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 1024,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return privateKey.trim().split('\n').slice(1, -1);
}

/** A whole PNG as far as redaction reads one: its signature, `bytes` of data, its IEND chunk. */
function png(bytes: number): Buffer {
  const data = Buffer.from(Array.from({ length: bytes }, (_, i) => (i * 37) % 256));
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), data, Buffer.from('0000000049454e44ae426082', 'hex')]);
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
    // A leading '$' or '%' not in a variable's shape ($NAME, ${...}, $(...), %NAME%) is the secret's own.
    ['the password is $uperS3cret!', `the password is ${REDACTED}`],
    ['the password is %Zx81!qq', `the password is ${REDACTED}`],
    // A password given as one ordinary word that ends its clause and does not say how it is.
    ['the password is dragon', `the password is ${REDACTED}`],
    ['the password for staging is tiger.', `the password for staging is ${REDACTED}.`],
    ['the admin password is monkey and the user is bob', `the admin password is ${REDACTED} and the user is bob`],
    ['the password was changed to sunshine', `the password was changed to ${REDACTED}`],
    ['the wifi passphrase was set to Welcome', `the wifi passphrase was set to ${REDACTED}`],
    // Random text right after a token's or a key's name, with no link word.
    ['use token abc123def456ghi789 for staging', `use token ${REDACTED} for staging`],
    ["the api key 'Zq9x8W7v6U5t4S3r' works", `the api key '${REDACTED}' works`],
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
    // After a bare 'to' or 'of' a number is a quantity or an issue's, not a PIN.
    'Increase the max token to 4096',
    'bump the token to 2048',
    'Fix the token of 12345 bug',
    'the password is $HOME/.pgpass or %APPDATA%',
    'console.log("the password is %s", password); the token is %(token)s; the secret is $1',
    'kubectl get secret db-creds -o yaml',
    'password + salt; password == other',
    'the token in the header is expired; the password for each user is hashed',
    '- [Username and Password flow](https://docs.example.com/auth)',
    'the source argument for a token is `args[token.index]`',
    // One word after a password's 'is' that says how it is, or is not the end of the clause.
    'the password is mandatory; the passphrase is optional; the password is unique.',
    'the password is checked, the password is broken, the password is reset',
    'the password is sent. The password is plaintext. The password is string',
    'the password is found in the vault',
    'the token is welcome and the secret is dragon',
    'password dragon; password field',
    // After a token's or a key's name alone: a word, a name, a short id.
    "Unexpected token 'export'; the token ID; kubectl get secret db-creds-0123456789abcdef; token a1b2c3",
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
    // A ':' inside the credentials is theirs; a '{' starts a reference only as a slot ({token}, {{ token }}, ${token}).
    ['Authorization: admin:hunter22', `Authorization: ${REDACTED}`],
    ['authorization: deploy:S3cretPass99', `authorization: ${REDACTED}`],
    ['Authorization: Key abc123:def456ghi789', `Authorization: Key ${REDACTED}`],
    ['curl -H "Authorization: Bearer {eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc}"', `curl -H "Authorization: Bearer ${REDACTED}"`],
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
    'Authorization: Bearer {token}',
    'Authorization: Bearer {}',
    'Authorization: Bearer $(cat ~/.token)',
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
  // A whole image's base64 as an encoder wraps it: lines of 76, then a shorter last one.
  const image = png(400).toString('base64');
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

  // A data URI's line after a PNG's first bytes, then other lines: they are no part of the image.
  const dataUriLine = '[logo]: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ';
  const awsSecret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

  it("redacts a private key's body on the lines after an image's data: URI", () => {
    const body = privateKeyBody().slice(0, 4);
    assert.deepEqual(redactLines(body), [REDACTED], 'alone, the body is redacted');
    assert.deepEqual(redactLines([dataUriLine, ...body]), [dataUriLine, REDACTED]);
    assert.equal(redact([dataUriLine, ...body].join('\n')), `${dataUriLine}\n${REDACTED}`);
    // Nor do lines of the image's own width make a key's body the image's: the data over them is no whole image.
    const wide = `data:image/png;base64,${image.slice(0, body[0].length)}`;
    assert.equal(redact([wide, ...body].join('\n')), `${wide}\n${REDACTED}`);
  });

  it("redacts an AWS secret key alone on the line after an image's data: URI", () => {
    assert.equal(redact(awsSecret), REDACTED);
    const text = `logo: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n${awsSecret}\n`;
    assert.equal(redact(text), text.replace(awsSecret, REDACTED));
    assert.deepEqual(redactLines(text.split('\n')), text.replace(awsSecret, REDACTED).split('\n'));
  });

  it('redacts a data: URI that holds no image, or is given under a secret\'s name', () => {
    // Data that starts with no image's or font's signature: a token labelled as an image.
    assert.equal(redact('token=data:image/png;base64,ghp1234567890abcdefABCDEFabcdef12345678'), `token=${REDACTED}`);
    assert.equal(redact(`password: "data:image/png;base64,${wrapped[0]}"`), `password: "${REDACTED}"`);
    // base64 of a PEM private key, even one that starts with a line break: as client-key-data's value, redacted.
    const b64 = Buffer.from('\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n').toString('base64');
    assert.equal(redact(`client-key-data: ${b64}`), `client-key-data: ${REDACTED}`);
    assert.equal(redact(`key: data:image/png;base64,${b64}`), `key: data:image/png;base64,${REDACTED}`);
    // An image's and a font's data are kept.
    for (const kept of [`logo: data:image/png;base64,${wrapped[0]}`, 'src: url(data:font/woff2;base64,d09GMgABAAAAAAZ4AA0AAAAADfQAAAYjAAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAP0ZGVE0cGh4GYACCWhEICoZghVoLEgABNgIkAyAEIAWDMgc2G)']) {
      assert.equal(redact(kept), kept);
    }
  });

  it("redacts a private key's body between a certificate's BEGIN and END lines", () => {
    const body = privateKeyBody();
    const text = ['-----BEGIN CERTIFICATE-----', ...body, '-----END CERTIFICATE-----'].join('\n');
    assert.equal(redact(text), ['-----BEGIN CERTIFICATE-----', REDACTED, '-----END CERTIFICATE-----'].join('\n'));
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    assert.equal(redact(publicKey), publicKey);
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
    ['an Authorization header of a megabyte of colons', `Authorization: ${'a:'.repeat(MB / 2)}`, () => `Authorization: ${REDACTED}`],
    ['credential words linked by to a number', megabyteOf('the token to 4096 '), unchanged],
    ['a credential word linked by to, a megabyte of spaces, a number', `the token to${' '.repeat(MB)}4096`, unchanged],
    ['a credential word, a link and a megabyte of a variable\'s name, then a symbol', `the password is $${'a'.repeat(MB)}!`, () => `the password is ${REDACTED}`],
    ['a credential word, a link and a megabyte of a format\'s flags', `the password is %${'0'.repeat(MB)}!`, () => `the password is ${REDACTED}`],
    ['credential words linked to a sigil', megabyteOf('the password is $! '), (t) => t.replace(/\$!/g, REDACTED)],
    ['secrets assigned a data: URI without its comma', megabyteOf(`token=data:${'a'.repeat(150)} `), (t) => t.replace(/data:a+/g, REDACTED)],
    [
      'a certificate of a megabyte of lines',
      `-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n${`${'Aa0+'.repeat(16)}\n`.repeat(certLines)}-----END CERTIFICATE-----`,
      unchanged,
    ],
    ['certificate headers without a body or an END line', megabyteOf('-----BEGIN CERTIFICATE-----\n'), unchanged],
    ['data URIs without data', megabyteOf('data:image/png;base64,'), unchanged],
    ['a data URI wrapped over a megabyte of lines', `data:image/png;base64,\n${png((MB / 4) * 3).toString('base64').match(/.{1,76}/g)!.join('\n')}\n`, unchanged],
    ['a data URI wrapped over a megabyte of lines that are no image', `data:image/png;base64,\n${`${'Aa0+'.repeat(19)}\n`.repeat(MB / 77)}`, () => `data:image/png;base64,${`\n${REDACTED}`.repeat(Math.ceil(Math.floor(MB / 77) / 201))}\n`],
    ['data URIs under a secret\'s name', megabyteOf('token=data:image/png;base64,iVBORw0KGgo '), (t) => t.replace(/data:image\/png;base64,iVBORw0KGgo/g, REDACTED)],
    ['base64 of white space before "-----BEGIN" after a megabyte of base64 characters', `value: ${'A'.repeat(MB)}Ci0tLS0tQkVHSU4${'A'.repeat(64)}`, unchanged],
    ['the base64 of "\\n-----BEGIN" repeated, decoding to no key', `value: ${megabyteOf('Ci0tLS0tQkVHSU4g')}`, unchanged],
  ];
  redactsHostileFast(hostile);
});
