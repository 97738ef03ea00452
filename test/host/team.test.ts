// Team store in the real extension host: Share with Team and Unshare from the sidebar's
// commands against a local S3 API (started here as a child process), the team status while the
// store is stopped (a network cut) and after it comes back.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as vscode from 'vscode';
import type { Memory } from '../../src/core/model/records';
import type { ShareResult, UnshareResult } from '../../src/core/team/sharing';
import { codeMemoryApi, extensionId, waitFor } from './helpers';

interface S3 {
  child: ChildProcess;
  port: number;
}

async function startS3(dir: string, port = 0): Promise<S3> {
  const root = vscode.extensions.getExtension(extensionId)!.extensionPath;
  const child = spawn(process.execPath, [path.join(root, 'test/unit/fixtures/s3ServerProcess.cjs'), '--dir', dir, '--port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`S3 server exited ${code}`)));
  });
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

function stopS3(s: S3): Promise<void> {
  if (s.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    s.child.once('exit', () => resolve());
    s.child.kill('SIGTERM');
  });
}

function bucketHolds(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (fs.readFileSync(full).includes(needle)) out.push(full);
    }
  };
  if (fs.existsSync(path.join(dir, 'team'))) walk(path.join(dir, 'team'));
  return out;
}

describe('team store (inside the VS Code host)', function () {
  this.timeout(180_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-host-team-'));
  let s3: S3;
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('codeMemory');

  before(async () => {
    s3 = await startS3(path.join(dir, 's3'));
    // The engine thread reads credentials from the environment when it opens.
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: `http://127.0.0.1:${s3.port}` });
    await codeMemoryApi();
    await config().update('teamStore', 's3://team/host', vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await config().update('teamStore', undefined, vscode.ConfigurationTarget.Global);
    await stopS3(s3);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('Share with Team sends the redacted memory; while the store is down a share waits and the status says offline; Unshare purges it', async () => {
    const api = await codeMemoryApi();
    const scope = (await api.scopeFor())!;
    // The setting changed in before() reopens the engine: the one to use is the reopened one, online.
    let engine = await api.engine();
    await waitFor('the reopened engine to reach the team store', async () => {
      try {
        engine = await api.engine();
        return (await engine.teamStatus())?.state === 'online';
      } catch {
        return false; // the engine of before the setting changed, closed meanwhile
      }
    });
    const memory: Memory = await engine.remember({ title: 'Host share check', text: 'deploys go through the release train marker-pelican password=hunter2hunter2' }, scope);
    const preview = await engine.previewShare('memory', memory.id, scope);
    assert.ok(!preview.text.includes('hunter2hunter2'), 'the preview is redacted');
    const shared = await vscode.commands.executeCommand<ShareResult>('codeMemory.shareWithTeam', { kind: 'memory', scope, id: memory.id }, { confirm: false });
    assert.equal(shared?.delivery, 'sent');
    assert.ok(bucketHolds(path.join(dir, 's3'), 'marker-pelican').length > 0, 'the memory is in the bucket');
    assert.deepEqual(bucketHolds(path.join(dir, 's3'), 'hunter2hunter2'), [], 'the secret never left');

    // Network cut.
    await stopS3(s3);
    const offline = await engine.remember({ title: 'Written offline', text: 'queued while the store is down marker-walrus' }, scope);
    const queued = await vscode.commands.executeCommand<ShareResult>('codeMemory.shareWithTeam', { kind: 'memory', scope, id: offline.id }, { confirm: false });
    assert.equal(queued?.delivery, 'queued');
    const status = await engine.teamStatus();
    assert.equal(status?.state, 'offline');
    assert.equal(status?.pending, 1);
    const bar = await waitFor('the status bar to show offline', async () => {
      await vscode.commands.executeCommand('codeMemory.showTeamStatus');
      return (await engine.teamStatus())?.state === 'offline';
    });
    assert.ok(bar);

    // The store comes back: the queued share goes out by itself.
    s3 = await startS3(path.join(dir, 's3'), s3.port);
    await waitFor('the queue to drain', async () => (await engine.teamStatus())?.pending === 0, 60_000);
    assert.equal((await engine.teamStatus())?.state, 'online');
    assert.ok(bucketHolds(path.join(dir, 's3'), 'marker-walrus').length > 0, 'the queued memory arrived');

    const un = await vscode.commands.executeCommand<UnshareResult>('codeMemory.unshareFromTeam', { kind: 'memory', scope, id: memory.id }, { confirm: false });
    assert.equal(un?.delivery, 'sent');
    assert.deepEqual(bucketHolds(path.join(dir, 's3'), 'marker-pelican'), [], 'the unshared memory is in no object of the bucket');
    assert.equal((await engine.getMemories([memory.id], scope)).length, 1, 'your own copy stays');
  });
});
