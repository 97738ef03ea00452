// Team memory on Azure Blob Storage, against Azurite: what teamStore.test.ts shows on the local S3
// API holds on az:// too. A teammate finds what was shared; an unshare leaves its text in no blob,
// and no secret ever reaches one (every blob of the container is read to check).
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { azureCall } from '../../src/core/store/objectRequests';
import { azureCredentials } from '../../src/core/store/objectStorage';
import { startAzurite } from './fixtures/azurite';
import type { Azurite } from './fixtures/azurite';
import { until } from './fixtures/s3Server';

process.env.LANCEDB_LOG ??= 'error';

const PROJECT = 'github.com/acme/shared';

/** The blobs of the container whose bytes hold `needle`. */
async function blobsHolding(az: Azurite, needle: string): Promise<string[]> {
  const c = azureCredentials(az.env)!;
  const out: string[] = [];
  for (const key of await az.keys()) {
    const got = await azureCall(c, 'GET', az.container, key, {}, Buffer.alloc(0), 10_000);
    if (got.body.includes(needle)) out.push(key);
  }
  return out;
}

describe('team store on Azure Blob (az://)', function () {
  this.timeout(300_000);
  let dir: string;
  let az: Azurite;
  const engines: MemoryEngine[] = [];
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-team-az-'));
    az = await startAzurite({ directory: path.join(dir, 'az'), container: 'team' });
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close().catch(() => undefined);
    await az.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function person(name: string): Promise<MemoryEngine> {
    const engine = await MemoryEngine.open({
      storeUri: path.join(dir, `${name}-store`),
      embedder: 'none',
      maintenanceIntervalMs: 0,
      team: { uri: 'az://team/acme', author: `${name} <${name.toLowerCase()}@example.com>`, env: az.env, refreshMs: 0, retryMs: 200 },
    });
    engines.push(engine);
    // Connected (in the background, after open) before anything is shared.
    await until(async () => (await engine.teamStatus())?.state === 'online');
    return engine;
  }

  it("reaches the container its own settings name, whatever emulator the process's environment names", async () => {
    // Lance reads the Azure variables of the process too: an emulator named there (another
    // Azurite, long stopped) must not take the place of the endpoint the store was given.
    const saved = { use: process.env.AZURE_STORAGE_USE_EMULATOR, url: process.env.AZURITE_BLOB_STORAGE_URL };
    process.env.AZURE_STORAGE_USE_EMULATOR = 'true';
    process.env.AZURITE_BLOB_STORAGE_URL = 'http://127.0.0.1:9';
    try {
      const alice = await person('Alice');
      const m = await alice.remember({ title: 'Release checklist', text: 'tag, build, publish marker-wombat' }, { project: PROJECT });
      assert.equal((await alice.share('memory', m.id, { project: PROJECT })).delivery, 'sent');
      assert.ok((await blobsHolding(az, 'marker-wombat')).length > 0, 'the shared text is in the container the store was given');
    } finally {
      for (const [k, v] of [['AZURE_STORAGE_USE_EMULATOR', saved.use], ['AZURITE_BLOB_STORAGE_URL', saved.url]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('share: a teammate finds it and sees who shared it, no secret reaches a blob; unshare leaves its text in no blob', async () => {
    const alice = await person('Alice');
    const bob = await person('Bob');
    const scope = { project: PROJECT };
    const m = await alice.remember({ title: 'Retry policy for the payment gateway', text: 'Use exponential backoff; api_key=sk-live-abcdef0123456789abcdef marker-quokka' }, scope);
    const shared = await alice.share('memory', m.id, scope);
    assert.equal(shared.delivery, 'sent');
    assert.ok((await blobsHolding(az, 'marker-quokka')).length > 0, 'the shared text is in the container');
    assert.deepEqual(await blobsHolding(az, 'sk-live-abcdef0123456789abcdef'), [], 'no secret leaves the machine');

    await bob.syncTeam();
    const hits = await bob.search('payment gateway backoff', { scope, limit: 5 });
    const team = hits.find((h) => h.origin?.store === 'team');
    assert.ok(team, `bob sees alice's memory: ${JSON.stringify(hits.map((h) => h.cell.title))}`);
    assert.equal(team.origin?.shared_by, 'Alice <alice@example.com>');
    assert.equal((await bob.search('payment gateway backoff', { scope: { project: 'github.com/other/repo' } })).length, 0);

    const un = await alice.unshare({ kind: 'memory', id: m.id }, scope);
    assert.equal(un.delivery, 'sent');
    assert.deepEqual(await blobsHolding(az, 'marker-quokka'), [], 'the unshared text is still in blobs of the container');
  });
});
