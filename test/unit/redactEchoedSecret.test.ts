// A secret's value echoed into a command that stores its input as a secret (gh secret set NAME,
// wrangler secret put NAME, docker secret create NAME -) is redacted, as one echoed into
// --password-stdin is; a variable's reference and an echo into anything else stay.

import { strict as assert } from 'node:assert';
import { REDACTED, redact } from '../../src/core/capture/redact';

describe('redaction of a secret echoed into a command that stores it', () => {
  it('redacts the echoed value, quoted or not, with printf or echo', () => {
    for (const [command, want] of [
      ['echo Zq9ghSecretVal | gh secret set API_TOKEN', `echo ${REDACTED} | gh secret set API_TOKEN`],
      ['echo -n "Zq9 quoted val" | gh secret set API_TOKEN --repo me/app', `echo -n "${REDACTED}" | gh secret set API_TOKEN --repo me/app`],
      ['printf %s Zq9printfVal | npx wrangler secret put API_KEY', `printf %s ${REDACTED} | npx wrangler secret put API_KEY`],
      ['printf "Zq9dockerSecret" | docker secret create db_password -', `printf "${REDACTED}" | docker secret create db_password -`],
      ['echo Zq9pw | docker login -u bob --password-stdin', `echo ${REDACTED} | docker login -u bob --password-stdin`],
    ]) {
      assert.equal(redact(command), want);
    }
  });

  it('keeps a variable reference, an echo into another command and prose', () => {
    for (const text of ['echo $API_TOKEN | gh secret set API_TOKEN', 'echo done | tee log.txt', 'echo building && gh secret set X < token.txt', 'echo "set the secret with gh secret set"']) {
      assert.equal(redact(text), text);
    }
  });

  it('redacts ~1 MB of hostile echoes in well under two seconds', () => {
    const MB = 1024 * 1024;
    for (const text of [`${'echo a | '.repeat(MB / 9)}gh secret set X`, 'echo abc | gh secret set X\n'.repeat(MB / 27), `echo "${'a'.repeat(MB)} | gh secret set X`]) {
      const start = performance.now();
      redact(text);
      assert.ok(performance.now() - start < 4000, `${Math.round(performance.now() - start)} ms`);
    }
  });
});
