// Text that names a secret without holding one stays as written: an identifier or a constant's name
// after 'the token', a variable given to a program's password option, an AWS ARN.
import { strict as assert } from 'node:assert';
import { redact } from '../../src/core/capture/redact';
import { editHunks } from '../../src/core/capture/editDiff';

describe('redaction keeps what holds no secret', () => {
  it('an edit far below an unclosed "BEGIN PRIVATE KEY" string constant keeps its lines and function header', () => {
    const top = `const PEM_HEADER = '-----BEGIN PRIVATE KEY-----';\nexport function isPem(t: string) { return t.startsWith(PEM_HEADER); }\n`;
    const filler = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const before = `${top}${filler}\nexport function compute(a: number) {\n  return a + 1;\n}\n`;
    const after = before.replace('return a + 1;', 'return a + 2;');
    const hunks = editHunks(before, after);
    assert.equal(hunks.length, 1);
    assert.deepEqual(hunks[0].removed, ['  return a + 1;']);
    assert.deepEqual(hunks[0].added, ['  return a + 2;']);
    assert.equal(hunks[0].header, 'export function compute(a: number) {');
  });

  it('a class name with a digit after "token"/"secret"/"api key" in prose is kept (CREDENTIAL_ALONE)', () => {
    for (const text of [
      'Inject the token OAuth2AuthorizedClientService here',
      'the secret Argon2PasswordEncoderV2 is configured',
      'the api key ApiKeyAuthenticationProvider2 validates it',
    ]) {
      assert.equal(redact(text), text);
    }
  });

  it('an environment variable NAME with a digit after "the secret"/"the token" in prose is kept (CREDENTIAL_ALONE)', () => {
    for (const text of ['pass the secret AWS_S3_SECRET_KEY to the job', 'add the token NPM_TOKEN_V2_PUBLISH in CI', 'rotate the api key GOOGLE_MAPS_KEY_2024 yearly']) {
      assert.equal(redact(text), text);
    }
  });

  it('a command-line password option given as a $VARIABLE reference is kept (new PASSWORD_OPTIONS entries)', () => {
    for (const text of [
      'openssl enc -aes-256-cbc -k $PASS -in a',
      'az storage blob upload --account-key $AZURE_KEY',
      'gh secret set FOO --body "$TOKEN"',
    ]) {
      assert.equal(redact(text), text);
    }
  });
});

describe('redaction: a Telegram bot token is not an AWS ARN', () => {
  it('an SNS/SQS ARN whose name starts with A keeps its account id and name', () => {
    for (const text of [
      'TopicArn: arn:aws:sns:us-east-1:123456789012:AlertsForProductionPaymentsService',
      'arn:aws:sqs:eu-west-1:123456789012:AuditEventsQueue-production-deadletter',
    ]) {
      assert.equal(redact(text), text);
    }
  });
});
