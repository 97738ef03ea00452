// Redaction where a rule's reach changed: literals joined onto a secret stop at a key (a diff's
// '+' line of the same setting keeps its own value's redaction), a Terraform block read past a
// quote a line leaves open, an edit's hunk header on a curl continuation line, a password echoed
// into a command in quotes or through a second pipe, and a Vault login in prose.
import * as assert from 'node:assert/strict';
import { describeEdit } from '../../src/core/capture/editDiff';
import { prepareObservation } from '../../src/core/capture/prepare';
import type { ObservationInput } from '../../src/core/api';
import { redact } from '../../src/core/capture/redact';

describe('redaction: rules whose reach changed', () => {
  it("a diff's two sides of one setting are both redacted (the new side's key is no literal joined onto the old value)", () => {
    const json = ['@@ -1,3 +1,3 @@', ' {', '-  "password": "oldS3cretValue1"', '+  "password": "newS3cretValue2"', ' }'].join('\n');
    const python = "-    'api_key': 'sk_live_oldvalue1234'\n+    'api_key': 'NewSecretValue9876'\n";
    for (const [text, secrets] of [[json, ['oldS3cretValue1', 'newS3cretValue2']], [python, ['sk_live_oldvalue1234', 'NewSecretValue9876']]] as const) {
      const out = redact(text);
      assert.deepEqual(secrets.filter((s) => out.includes(s)), [], out);
      assert.match(out, /\+ {2,4}["']?(?:password|api_key)["']?: /, 'the key stays');
    }
    const narrative = '-  "client_secret": "oldS3cretValue1"\n+  "client_secret": "newS3cretValue2"';
    const prepared = prepareObservation({ type: 'edit', title: 'Rotate the client secret', narrative } as ObservationInput, 'p', undefined, Date.now(), () => 's1');
    assert.ok(!String(prepared.obs.narrative).includes('S3cretValue'), String(prepared.obs.narrative));
  });

  it("a Terraform secret's default below a line that leaves a quote open (a comment, a description being typed) is redacted", () => {
    for (const text of [
      'variable "db_password" {\n  # set it in the 1Password "Infra vault\n  type    = string\n  default = "S3cretValue1"\n}',
      'variable "db_password" {\n  description = "The database pass\n  default = "S3cretValue1"\n}',
    ]) assert.ok(!redact(text).includes('S3cretValue1'), redact(text));
    const before = 'variable "db_password" {\n  type = string\n  default = "S3cretValue1"\n}\n';
    const after = 'variable "db_password" {\n  description = "The database pass\n  type = string\n  default = "S3cretValue1"\n}\n';
    assert.ok(!JSON.stringify(describeEdit('main.tf', before, after)).includes('S3cretValue1'));
  });

  it("an edit's hunk header on a curl continuation line far above the change loses its -u password", () => {
    const secret = 'Sup3rSecretPw9';
    const head = ['#!/bin/sh', 'curl \\', `https://api.example.com/upload -u admin:${secret} \\`, '  -F file=@a.txt', '  # a', '  # b', '  # c', '  # d', '  # e'];
    const c = describeEdit('deploy.sh', [...head, '  -x', '  -y one', ''].join('\n'), [...head, '  -x', '  -y three', ''].join('\n'));
    assert.ok(c.hunks.length > 0 && /three/.test(c.narrative ?? ''), 'control: the change is told');
    assert.ok(!(c.narrative ?? '').includes(secret) && !(c.searchText ?? '').includes(secret), c.narrative ?? '');
  });

  it('a password echoed into --password-stdin in quotes (any text), or through a second pipe, is redacted', () => {
    const cases: [string, string][] = [
      [`echo 'p@ss;w0rd!X' | docker login -u bob --password-stdin`, 'p@ss;w0rd!X'],
      [`echo "my s3cret pass" | docker login -u bob --password-stdin`, 'my s3cret pass'],
      [`echo -n "S3cret(Tok3n)" | docker login -u bob --password-stdin`, 'S3cret(Tok3n)'],
      [`echo S3cretTok3n | tr -d '\\n' | docker login -u bob --password-stdin`, 'S3cretTok3n'],
    ];
    assert.deepEqual(cases.filter(([line, secret]) => redact(line).includes(secret)).map(([line]) => redact(line)), []);
    assert.equal(redact(`echo "my s3cret pass" | docker login --password-stdin`), 'echo "[REDACTED]" | docker login --password-stdin');
  });

  it('"vault login" in prose is not a token', () => {
    for (const text of ['Run vault login whenever the token expires.', 'use vault login interactively']) assert.equal(redact(text), text);
  });
});
