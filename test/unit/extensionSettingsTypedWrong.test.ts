// The codeMemory.* settings as a hand-edited settings.json may hold them: VS Code only underlines a
// value of the wrong type, and getConfiguration() hands it over as written. Each setting must be
// read as its default (or its nearest bound) and named in a message, never crash the extension
// (a number where text belongs), turn a privacy switch the wrong way ("false" in quotes), make the
// server listen on a socket path (a port written as a word), or delete the request log (a
// retention written as text read as 1).
import { strict as assert } from 'node:assert';
import type { CodeMemoryConfig } from '../../src/extension/config';
import { withVscodeStub } from './vscodeStub';

type ConfigModule = typeof import('../../src/extension/config');

/** The config module over these settings.json values (package.json's defaults for the rest), and the warnings it showed. */
function settings(values: Record<string, unknown>): { config: ConfigModule; warnings: string[] } {
  const warnings: string[] = [];
  const stub = {
    workspace: { getConfiguration: () => ({ get: <T>(key: string, fallback?: T): T | undefined => (key in values ? (values[key] as T) : fallback) }) },
    window: { showWarningMessage: async (m: string) => void warnings.push(m) },
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = withVscodeStub(stub, () => require('../../src/extension/config') as ConfigModule);
  return { config, warnings };
}

function readWith(values: Record<string, unknown>): CodeMemoryConfig {
  return settings(values).config.readConfig();
}

describe('extension: settings typed wrong into settings.json', () => {
  it('a number, object, list or boolean where text belongs is read as empty, not a crash of every command', () => {
    for (const bad of [42, { a: 1 }, ['x'], true]) {
      let c: CodeMemoryConfig | undefined;
      assert.doesNotThrow(() => {
        c = readWith({ storeLocation: bad, teamStore: bad, 'store.endpoint': bad, 'embedding.endpoint': bad, 'embedding.model': bad, 'rerank.endpoint': bad, 'rerank.model': bad });
      }, JSON.stringify(bad));
      assert.deepEqual([c!.storeLocation, c!.teamStore, c!.storeEndpoint, c!.embeddingEndpoint, c!.embeddingModel, c!.rerankEndpoint, c!.rerankModel], ['', '', '', '', '', '', ''], JSON.stringify(bad));
    }
    assert.equal(readWith({ storeLocation: null }).storeLocation, '');
  });

  it('capture.exclude written as one string is that one pattern; non-text entries are left out; null is the default list', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ExcludeMatcher } = require('../../src/extension/capture/excludes') as typeof import('../../src/extension/capture/excludes');
    assert.deepEqual(readWith({ 'capture.exclude': '**/*.secret' }).exclude, ['**/*.secret']);
    const mixed = readWith({ 'capture.exclude': ['**/*.secret', 42, null, { x: 1 }] }).exclude;
    assert.deepEqual(mixed, ['**/*.secret']);
    assert.equal(new ExcludeMatcher(mixed).isExcluded('config/prod.secret'), true);
    const fallback = readWith({ 'capture.exclude': null }).exclude;
    assert.ok(fallback.includes('**/.env'), JSON.stringify(fallback));
    assert.ok(readWith({ 'capture.exclude': 7 }).exclude.includes('**/.env'));
  });

  it('capture.enabled written as "false" turns capture off', () => {
    assert.equal(readWith({ 'capture.enabled': 'false' }).captureEnabled, false);
    assert.equal(readWith({ 'capture.enabled': ' FALSE ' }).captureEnabled, false);
    assert.equal(readWith({ 'capture.enabled': 'true' }).captureEnabled, true);
    assert.equal(readWith({ 'capture.enabled': false }).captureEnabled, false);
    assert.equal(readWith({}).captureEnabled, true);
  });

  it('session.idleMinutes and summariser.tokenBudget that are not numbers are their defaults, never NaN; below the minimum, the minimum', () => {
    for (const bad of ['abc', null, { m: 5 }, Number.NaN, '']) {
      assert.equal(readWith({ 'session.idleMinutes': bad }).sessionIdleMinutes, 30, JSON.stringify(bad));
      assert.equal(readWith({ 'summariser.tokenBudget': bad }).summariserTokenBudget, 4000, JSON.stringify(bad));
    }
    assert.equal(readWith({ 'session.idleMinutes': -5 }).sessionIdleMinutes, 1);
    assert.equal(readWith({ 'session.idleMinutes': '45' }).sessionIdleMinutes, 45);
    assert.equal(readWith({ 'summariser.tokenBudget': 10 }).summariserTokenBudget, 500);
  });

  it('server.port that is not a whole number from 0 to 65535 is 0 (a free port), never a string node would take for a socket path', () => {
    for (const bad of ['abc', '/tmp/sock', '8080', -1, 70_000, 3.5, Number.NaN, true]) {
      assert.equal(readWith({ 'server.port': bad }).serverPort, 0, JSON.stringify(bad));
    }
    assert.equal(readWith({ 'server.port': 8123 }).serverPort, 8123);
    assert.equal(readWith({}).serverPort, 0);
  });

  it('requestLog.retentionDays and maxRows written as text are read as numbers; not numbers, the defaults (never 1, which empties the log)', () => {
    const text = readWith({ 'requestLog.retentionDays': '30', 'requestLog.maxRows': '500' });
    assert.deepEqual([text.requestLogRetentionDays, text.requestLogMaxRows], [30, 500]);
    for (const bad of ['abc', null, Number.NaN, {}]) {
      const c = readWith({ 'requestLog.retentionDays': bad, 'requestLog.maxRows': bad });
      assert.deepEqual([c.requestLogRetentionDays, c.requestLogMaxRows], [30, 10_000], JSON.stringify(bad));
    }
    const out = readWith({ 'requestLog.retentionDays': 0, 'requestLog.maxRows': 1e12 });
    assert.deepEqual([out.requestLogRetentionDays, out.requestLogMaxRows], [1, 10_000_000]);
  });

  it('rerank.candidates that is not a number is 30; out of range, the nearest bound', () => {
    assert.equal(readWith({ 'rerank.candidates': 'many' }).rerankCandidates, 30);
    assert.equal(readWith({ 'rerank.candidates': 500 }).rerankCandidates, 100);
    assert.equal(readWith({ 'rerank.candidates': 0 }).rerankCandidates, 2);
  });

  it('an unknown embedding or summariser provider is the default one', () => {
    const c = readWith({ 'embedding.provider': 'gpt9', 'summariser.provider': 42 });
    assert.deepEqual([c.embeddingProvider, c.summariser], ['use-lite', 'extractive']);
  });

  it('each setting not taken as written is named, with its value and what is used, once per change', () => {
    const { config, warnings } = settings({ 'server.port': 'abc', 'requestLog.maxRows': 'lots', 'capture.enabled': 'yes' });
    const logged: string[] = [];
    config.reportSettingProblems((m) => logged.push(m));
    assert.deepEqual(logged, [
      'codeMemory.capture.enabled is "yes", not true or false; using true.',
      'codeMemory.server.port is "abc", not a port (a whole number from 0 to 65535); using 0.',
      'codeMemory.requestLog.maxRows is "lots", not a number; using 10000.',
    ]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /^Code Memory: 3 settings are not valid \(see Show Log\): codeMemory\.capture\.enabled is "yes"/);
    // The same settings read again (another change elsewhere): not said again.
    config.reportSettingProblems((m) => logged.push(m));
    assert.equal(warnings.length, 1);
    assert.equal(logged.length, 3);
    // Valid settings say nothing.
    const ok = settings({ 'server.port': 8080 });
    ok.config.reportSettingProblems((m) => logged.push(m));
    assert.deepEqual(ok.warnings, []);
    assert.equal(logged.length, 3);
  });
});

describe('extension: a store location given as a relative path', () => {
  it('is not used (it would be a folder of the extension host, and another for the CLI an agent runs); the default is, and the message says why', () => {
    const { config } = settings({ storeLocation: 'memstore', teamStore: './shared/team' });
    const c = config.readConfig();
    assert.deepEqual([c.storeLocation, c.teamStore], ['', '']);
    assert.deepEqual(config.settingProblems(), [
      'codeMemory.storeLocation is "memstore", a relative path; give the folder as an absolute path or ~/…; using the default store, ~/.code-memory/store.',
      'codeMemory.teamStore is "./shared/team", a relative path; give the folder as an absolute path or ~/…; using no team store.',
    ]);
  });

  it('an absolute folder, ~/…, file:// and object-store URIs are used as written', () => {
    for (const location of ['/srv/memory', '~/memory', '~', 'file:///srv/memory', 's3://bucket/me', 'gs://b/p', 'az://c/p', 'C:\\memory', 'D:/memory']) {
      const { config } = settings({ storeLocation: location, teamStore: location });
      const c = config.readConfig();
      assert.deepEqual([c.storeLocation, c.teamStore], [location, location]);
      assert.deepEqual(config.settingProblems(), [], location);
    }
  });
});
