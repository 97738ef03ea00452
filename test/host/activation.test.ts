import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import manifest from '../../package.json';

const extensionId = `${manifest.publisher}.${manifest.name}`;

describe('extension activation (inside the VS Code host)', () => {
  it(`finds ${extensionId} among the installed extensions`, () => {
    assert.ok(vscode.extensions.getExtension(extensionId), `${extensionId} is not loaded in this host`);
  });

  it('activates the extension', async () => {
    const extension = vscode.extensions.getExtension(extensionId);
    assert.ok(extension);
    await extension.activate();
    assert.equal(extension.isActive, true);
    console.log(`      host: ${extensionId} ${extension.packageJSON.version} activated in VS Code ${vscode.version}`);
  });

  it('registers every command contributed in package.json', async () => {
    const contributed = (manifest.contributes as { commands?: { command: string }[] }).commands ?? [];
    assert.ok(contributed.length > 0, 'package.json contributes no commands');
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.map((c) => c.command).filter((id) => !registered.has(id));
    assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });

  it('opens the Code Memory activity-bar container', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.codeMemory');
  });
});
