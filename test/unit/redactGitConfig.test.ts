// A secret set in git's configuration on a command line (`git config --global github.token …`,
// hub's oauthtoken, sendemail.smtppass) is redacted; settings whose last part names no secret
// (credential.helper, user.name) keep their value. Through observe to the store files too.

import { strict as assert } from 'node:assert';
import { REDACTED, redact } from '../../src/core/capture/redact';
import { filesContaining } from './diskFixture';
import { openTestEngine, removeDir } from './mcpFixture';

process.env.LANCEDB_LOG ??= 'error';

const TOKEN = 'Zq9GitCfgTok12345abcdef';

describe('redaction of secrets set with git config', function () {
  this.timeout(120_000);

  it('redacts the value of a setting whose name says it is a secret', () => {
    for (const [command, want] of [
      [`git config --global github.token ${TOKEN}`, `git config --global github.token ${REDACTED}`],
      [`git config hub.oauthtoken ${TOKEN}`, `git config hub.oauthtoken ${REDACTED}`],
      [`git config --global sendemail.smtppass ${TOKEN}`, `git config --global sendemail.smtppass ${REDACTED}`],
      [`git config --local --add github.token "${TOKEN}"`, `git config --local --add github.token "${REDACTED}"`],
    ]) {
      assert.equal(redact(command), want);
    }
  });

  it('keeps settings that name no secret, reads, unsets and variable references', () => {
    for (const command of [
      'git config --global credential.helper store',
      'git config --global user.name "Ada Lovelace"',
      'git config --get github.token && echo ok',
      'git config --global --unset github.token',
      'git config --global github.token $GITHUB_TOKEN',
      'git config --global http.sslKey /etc/ssl/client.pem',
      'git config core.sshCommand "ssh -i ~/.ssh/deploy"',
    ]) {
      assert.equal(redact(command), command);
    }
  });

  it('redacts ~1 MB of hostile git config text in well under a second', () => {
    for (const text of [`git config ${'a.'.repeat(500_000)}token`, 'git config --global '.repeat(50_000), `git config a${'.b'.repeat(400_000)}password value`]) {
      const start = performance.now();
      redact(text);
      assert.ok(performance.now() - start < 2000, `${Math.round(performance.now() - start)} ms`);
    }
  });

  it("an agent's report of the command leaves no byte of the token in the store files", async () => {
    const { engine, dir } = await openTestEngine();
    try {
      await engine.observe([{ type: 'terminal', title: `\`git config --global github.token ${TOKEN}\` succeeded`, narrative: `git config --global github.token ${TOKEN}` }], { project: 'acme/git-config' });
      await engine.close();
      assert.deepEqual(filesContaining(dir, 'Zq9GitCfgTok'), []);
    } finally {
      await engine.close().catch(() => undefined);
      removeDir(dir);
    }
  });
});
