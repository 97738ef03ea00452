// The "Get started with Code Memory" walkthrough inside a real VS Code: it is contributed and
// opens, and every step is completed the way a user completes it, by running the commands its
// buttons run (the command links in the step's description, with their arguments). A step is
// marked done by VS Code when one of its completionEvents (onCommand:...) fires; the e2e run
// shows the check marks in the rendered walkthrough.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentSnippet } from '../../src/extension/agents/agentConfig';
import type { CodeMemoryExtensionApi } from '../../src/extension/extension';
import type { ServerInfo } from '../../src/extension/webviews/serverInfoPanel';
import type { RecallResult } from '../../src/extension/webviews/recallPanel';
import manifest from '../../package.json';
import { codeMemoryApi, extensionId, sleep, waitFor, workspaceFolder } from './helpers';

interface Step {
  id: string;
  title: string;
  description: string;
  media: { markdown?: string; image?: string };
  completionEvents: string[];
}
interface Walkthrough {
  id: string;
  title: string;
  steps: Step[];
}

const walkthrough = (manifest.contributes as unknown as { walkthroughs: Walkthrough[] }).walkthroughs[0];

/** The buttons of a step: `[label](command:id?<url-encoded JSON args>)` links in its description. */
function buttons(step: Step): { label: string; command: string; args: unknown[] }[] {
  return [...step.description.matchAll(/\[([^\]]+)\]\(command:([\w.]+)(?:\?([^)]+))?\)/g)].map((m) => {
    const args: unknown = m[3] ? JSON.parse(decodeURIComponent(m[3])) : undefined;
    return { label: m[1], command: m[2], args: args === undefined ? [] : Array.isArray(args) ? args : [args] };
  });
}

function completingCommands(step: Step): string[] {
  return step.completionEvents.map((e) => /^onCommand:(.+)$/.exec(e)?.[1]).filter((c): c is string => Boolean(c));
}

/**
 * Runs a button's command as a click does. A command that asks something in a notification
 * (Copy Agent Configuration: "Also add it to .mcp.json?") gets the answer a user gives by closing
 * it: the notifications are cleared until the command finishes.
 */
async function press(button: { command: string; args: unknown[] }): Promise<unknown> {
  let done = false;
  const result = Promise.resolve(vscode.commands.executeCommand(button.command, ...button.args)).finally(() => (done = true));
  const deadline = Date.now() + 60_000;
  while (!done && Date.now() < deadline) {
    await Promise.race([result.catch(() => undefined), sleep(500)]);
    if (!done) await vscode.commands.executeCommand('notifications.clearAll');
  }
  return result;
}

describe('Get started walkthrough (inside the VS Code host)', function () {
  this.timeout(180_000);
  let api: CodeMemoryExtensionApi;

  before(async () => {
    api = await codeMemoryApi();
  });

  it('is contributed with its four steps, each completed by a command it offers as a button', async () => {
    assert.equal(walkthrough.title, 'Get started with Code Memory');
    assert.deepEqual(
      walkthrough.steps.map((s) => s.id),
      ['importHistory', 'captured', 'connectAgent', 'recall'],
    );
    const registered = new Set(await vscode.commands.getCommands(true));
    const extensionPath = vscode.extensions.getExtension(extensionId)?.extensionPath;
    assert.ok(extensionPath);
    for (const step of walkthrough.steps) {
      const completing = completingCommands(step);
      assert.equal(completing.length, step.completionEvents.length, `${step.id}: every completion event is onCommand`);
      for (const id of [...completing, ...buttons(step).map((b) => b.command)]) assert.ok(registered.has(id), `${step.id}: ${id} is not registered`);
      assert.ok(
        buttons(step).some((b) => completing.includes(b.command)),
        `${step.id}: no button runs a command that completes the step`,
      );
      assert.ok(step.media.markdown && fs.existsSync(path.join(extensionPath, step.media.markdown)), `${step.id}: media ${step.media.markdown} missing`);
    }
  });

  // In the host suites (extensionMode Test) the extension does not open it on first run.
  it('opens in the editor area', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.openWalkthrough', `${extensionId}#${walkthrough.id}`, false);
    const label = await waitFor('the walkthrough tab', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label, 15_000);
    assert.match(label, /Welcome|Walkthrough|Code Memory/i);
  });

  it('step 1: Import Git History imports the workspace repository', async () => {
    const [button] = buttons(walkthrough.steps[0]);
    const result = (await press(button)) as { imported: number; skipped: number } | undefined;
    assert.ok(result, 'the import returned no result');
    assert.ok(result.imported + result.skipped >= 1, JSON.stringify(result));
  });

  it('step 2: Show What Is Captured and Pause Capture run, and capture resumes afterwards', async () => {
    const step = walkthrough.steps[1];
    for (const button of buttons(step)) await press(button);
    // Paused: a new file is not recorded.
    const before = api.captureStats().events;
    fs.writeFileSync(path.join(workspaceFolder().uri.fsPath, 'walkthrough-paused.txt'), 'x\n');
    await sleep(1500);
    await api.flushCapture();
    assert.equal(api.captureStats().events, before, 'events were recorded while paused');
    await vscode.commands.executeCommand('codeMemory.resumeCapture');
  });

  it('step 3: the agent buttons copy the configuration for Claude Code, Cursor and Codex, and show the server', async () => {
    const step = walkthrough.steps[2];
    const copied: string[] = [];
    for (const button of buttons(step)) {
      const result = await press(button);
      if (button.command === 'codeMemory.copyAgentConfiguration') {
        const snippet = result as AgentSnippet;
        assert.ok(snippet?.text, `${button.label}: no configuration`);
        assert.equal(await vscode.env.clipboard.readText(), snippet.text, `${button.label}: not on the clipboard`);
        assert.match(snippet.text, /cli\.js/);
        copied.push(snippet.title);
      } else {
        assert.match((result as ServerInfo).url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/mcp\/memory$/);
      }
    }
    assert.deepEqual(copied, ['Claude Code', 'Cursor', 'Codex']);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('step 4: Recall Context for Selection answers for the selected text', async () => {
    const editor = await vscode.window.showTextDocument(vscode.Uri.joinPath(workspaceFolder().uri, 'README.md'));
    const line = editor.document.lineAt(0);
    editor.selection = new vscode.Selection(line.range.start.translate(0, 2), line.range.end);
    const [button] = buttons(walkthrough.steps[3]);
    const result = (await press(button)) as RecallResult | undefined;
    assert.ok(result, 'the command returned no result');
    assert.equal(result.query, line.text.slice(2));
    assert.ok(result.hits.length > 0, 'memory had nothing for the workspace README after the import');
  });
});
