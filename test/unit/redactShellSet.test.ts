// A secret a shell sets without '=' is redacted as `export NAME=value` is: fish's set -x NAME
// value, csh's setenv NAME value, Windows' setx [/M] NAME value. A variable's reference, a
// command's output, a name that holds no secret and prose about these commands stay as written.

import { strict as assert } from 'node:assert';
import { REDACTED, redact } from '../../src/core/capture/redact';

describe('redaction of secrets a shell sets without =', () => {
  it('redacts the value under a secret name, quoted or not', () => {
    for (const [command, want] of [
      ['set -x AWS_SECRET_ACCESS_KEY Zq9fishSecretKey', `set -x AWS_SECRET_ACCESS_KEY ${REDACTED}`],
      ['set -gx OPENAI_API_KEY Zq9fishSecretKey2', `set -gx OPENAI_API_KEY ${REDACTED}`],
      ['set -Ux GITHUB_TOKEN "Zq9 quoted fish"', `set -Ux GITHUB_TOKEN ${REDACTED}`],
      ['setenv API_TOKEN Zq9cshTok123', `setenv API_TOKEN ${REDACTED}`],
      ['setx API_KEY Zq9setxKey123', `setx API_KEY ${REDACTED}`],
      ['setx /M DB_PASSWORD "Zq9 setx quoted"', `setx /M DB_PASSWORD ${REDACTED}`],
      ['cd app && setenv API_TOKEN Zq9cshTok123 && make', `cd app && setenv API_TOKEN ${REDACTED} && make`],
    ]) {
      assert.equal(redact(command), want);
    }
  });

  it('keeps references, command output, other names, erasures and prose', () => {
    for (const text of [
      'set -x API_TOKEN $OTHER_TOKEN',
      'set -x API_TOKEN (cat ~/.token)',
      'set -x PATH /usr/bin $PATH',
      'setenv PATH /usr/bin',
      'set -e API_TOKEN',
      'setx API_KEY %SECRET%',
      'set password to something safe',
      'Set the token with setenv, then run it',
      'to set the password use setx /M to make it global',
    ]) {
      assert.equal(redact(text), text);
    }
  });

  it('redacts ~1 MB of hostile set commands in well under a second', () => {
    for (const text of [`set ${'-x '.repeat(300_000)}TOKEN v`, 'set -x '.repeat(140_000), `setx ${'/M '.repeat(300_000)}API_KEY v`, ' set -x API_TOKEN'.repeat(60_000), `set -x ${'A_'.repeat(400_000)}TOKEN v`]) {
      const start = performance.now();
      redact(text);
      assert.ok(performance.now() - start < 2000, `${Math.round(performance.now() - start)} ms`);
    }
  });
});
