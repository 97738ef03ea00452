// A day's work in a real extension host, step by step: edit a function, run a failing test task,
// fix it, run it green, commit, switch branch. Each step is stored as an observation a person
// would recognise, the session summary says what happened, and Recall Context for Selection on
// the edited code finds the edit.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SharedModelEmbedder } from '../../src/core/embed/sharedModel/client';
import { hostFolder } from '../../src/core/embed/sharedModel/protocol';
import type { Observation } from '../../src/core/model/records';
import type { CodeMemoryExtensionApi } from '../../src/extension/extension';
import type { RecallResult } from '../../src/extension/webviews/recallPanel';
import { codeMemoryApi, parseList, waitFor, workspaceFolder } from './helpers';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, '-c', 'user.name=Host Test', '-c', 'user.email=host@test.invalid', ...args], { encoding: 'utf8' }).trim();
}

const MATH = 'export function add(a, b) {\n  return a + b;\n}\n\nexport function multiply(a, b) {\n  return a * b;\n}\n';
const TEST = [
  "const { test } = require('node:test');",
  "const assert = require('node:assert/strict');",
  "const fs = require('node:fs');",
  // The module is ESM-looking on purpose (export); the test reads it as text and evaluates it.
  "const src = fs.readFileSync(__dirname + '/scenario-math.js', 'utf8').replace(/export /g, '');",
  "const { multiply } = new Function(src + '\\nreturn { multiply };')();",
  "test('multiply scales by repeated addition', () => { assert.equal(multiply(3, 4), 12); });",
  '',
].join('\n');

async function runTask(folder: vscode.WorkspaceFolder, name: string): Promise<number | undefined> {
  const task = new vscode.Task({ type: 'shell', task: name }, folder, name, 'scenario', new vscode.ShellExecution('node --test scenario-math.test.cjs'));
  task.group = vscode.TaskGroup.Test;
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Never };
  const ended = new Promise<number | undefined>((resolve) => {
    const sub = vscode.tasks.onDidEndTaskProcess((e) => {
      if (e.execution.task.name !== name) return;
      sub.dispose();
      resolve(e.exitCode);
    });
  });
  await vscode.tasks.executeTask(task);
  return ended;
}

describe('scenario: edit, fail, fix, pass, commit, switch branch (inside the VS Code host)', function () {
  this.timeout(600_000);
  let api: CodeMemoryExtensionApi;
  let root: string;
  let project: string;

  before(async () => {
    api = await codeMemoryApi();
    root = workspaceFolder().uri.fsPath;
    await api.gitReady();
    const scope = await api.scopeFor(workspaceFolder().uri);
    assert.ok(scope);
    project = scope.project;
    fs.writeFileSync(path.join(root, 'scenario-math.js'), MATH);
    fs.writeFileSync(path.join(root, 'scenario-math.test.cjs'), TEST);
    git(root, 'add', 'scenario-math.js', 'scenario-math.test.cjs');
    git(root, 'commit', '-q', '-m', 'Add multiply and its test');
    await waitFor('the Git extension to see the commit', () => api.headOf(workspaceFolder().uri)?.sha === git(root, 'rev-parse', 'HEAD'), 60_000);
    // The commit and the new files land in the session now, before the work starts.
    await api.flushCapture();
  });

  it('stores each step and summarises the session in a person\'s words', async () => {
    const folder = workspaceFolder();
    const uri = vscode.Uri.file(path.join(root, 'scenario-math.js'));
    const editor = await vscode.window.showTextDocument(uri);
    const body = (text: string) => editor.edit((b) => b.replace(new vscode.Range(5, 0, 5, editor.document.lineAt(5).text.length), text));
    const save = () => waitFor('scenario-math.js to be saved', async () => (await editor.document.save()) || !editor.document.isDirty, 30_000);

    // 1. Edit a function: a new way to multiply, with a bug.
    await body('  // repeated addition keeps the overflow behaviour of the old integer code\n  let product = 0;\n  for (let i = 0; i < b; i++) product += b;\n  return product;');
    await save();
    // 2. The test task fails.
    assert.notEqual(await runTask(folder, 'scenario unit tests'), 0);
    // 3. Fix it.
    const buggy = editor.document.getText().indexOf('product += b;');
    await editor.edit((b) => b.replace(new vscode.Range(editor.document.positionAt(buggy), editor.document.positionAt(buggy + 'product += b;'.length)), 'product += a;'));
    await save();
    // 4. The test task passes.
    assert.equal(await runTask(folder, 'scenario unit tests'), 0);
    // 5. Commit, 6. switch branch.
    git(root, 'commit', '-qam', 'Multiply by repeated addition');
    const sha = git(root, 'rev-parse', 'HEAD');
    await waitFor('the Git extension to see the commit', () => api.headOf(folder.uri)?.sha === sha, 60_000);
    const branch = 'scenario/next';
    git(root, 'checkout', '-q', '-b', branch);
    await waitFor('the Git extension to see the branch', () => api.headOf(folder.uri)?.branch === branch, 60_000);

    const engine = await api.engine();
    const all = await waitFor('every step stored', async () => {
      await api.flushCapture();
      const o = await engine.listObservations({ project }, { limit: 1000 });
      const ok = o.some((x) => x.type === 'commit' && x.commit_sha === sha) && o.some((x) => x.type === 'checkout' && x.branch === branch) && o.filter((x) => x.type === 'task' && /scenario unit tests/.test(x.title ?? '')).length >= 2;
      return ok ? o : undefined;
    }, 120_000);
    const commit = all.find((o) => o.type === 'commit' && o.commit_sha === sha) as Observation;
    const edit0 = all.find((o) => o.type === 'edit' && /^Edited scenario-math\.js/.test(o.title ?? ''));
    assert.ok(edit0, `the edit of scenario-math.js among: ${all.map((o) => `${o.memory_session_id} ${o.branch} ${o.type}: ${o.title}`).join(' | ')}`);
    const session = edit0.memory_session_id;
    const inSession = all.filter((o) => o.memory_session_id === session);
    console.log(`      session ${session}:\n${all.map((o) => `        ${o.memory_session_id} ${o.branch} ${o.type}: ${o.title} — ${o.subtitle ?? ''}`).join('\n')}`);

    // The edit: one observation for the file that grew over both saves, with what changed.
    const edits = inSession.filter((o) => o.type === 'edit' && parseList(o.files_modified).includes('scenario-math.js') && !/^Changed on disk/.test(o.title ?? ''));
    assert.equal(edits.length, 1, edits.map((e) => e.title).join(' | '));
    const edit = edits[0];
    assert.match(edit.title ?? '', /^Edited scenario-math\.js/);
    assert.match(edit.subtitle ?? '', /^2 saves · 1 hunk, \+4 −1 lines$/);
    assert.match(edit.narrative ?? '', /- return a \* b;/);
    assert.match(edit.narrative ?? '', /\+ for \(let i = 0; i < b; i\+\+\) product \+= a;/);
    assert.match(edit.facts ?? '', /comment in scenario-math\.js: repeated addition keeps the overflow behaviour/);
    assert.match(edit.facts ?? '', /added in scenario-math\.js: product/);

    // The test runs, failing then passing.
    const tasks = inSession.filter((o) => o.type === 'task').sort((a, b) => a.created_at_epoch - b.created_at_epoch || a.id - b.id);
    assert.match(tasks[0].title ?? '', /^Test task 'scenario unit tests' failed \(exit \d+\)$/);
    assert.equal(tasks[tasks.length - 1].title, "Test task 'scenario unit tests' succeeded");
    // Shell integration (code-server has it) gives the failing run's output: its first failing test.
    assert.equal(tasks[0].subtitle, 'first failing test: multiply scales by repeated addition');
    assert.match(tasks[0].narrative ?? '', /AssertionError|Expected values|12/);
    assert.ok(!inSession.some((o) => o.type === 'terminal' && /scenario-math\.test/.test(o.title ?? '')), 'the task\'s command is not reported twice');

    // The commit and the branch switch.
    assert.equal(commit.title, 'Multiply by repeated addition');
    assert.equal(commit.memory_session_id, session, 'the commit is part of the work');
    const checkout = all.find((o) => o.type === 'checkout' && o.branch === branch);
    assert.ok(checkout);
    assert.notEqual(checkout.memory_session_id, session, 'the branch switch ended the session');

    // The switch ended the session: its summary says each step.
    const summary = await waitFor('the session summary', async () => (await engine.listSessions({ project }, 100)).find((s) => s.memory_session_id === session)?.summary ?? undefined, 120_000);
    console.log(`      summary: ${JSON.stringify(summary, null, 1)}`);
    assert.match(summary.completed ?? '', /Committed: Multiply by repeated addition/);
    assert.match(summary.completed ?? '', /Changed [^\n]*scenario-math\.js/);
    assert.match(summary.learned ?? '', /Test task 'scenario unit tests' went from failing.* to passing/);
    assert.doesNotMatch(JSON.stringify(summary), /change\(s\) to|touched /);

    // Recall Context for Selection on the edited code finds the edit.
    await vscode.window.showTextDocument(uri);
    const active = vscode.window.activeTextEditor as vscode.TextEditor;
    const line = active.document.getText().split('\n').findIndex((l) => l.includes('repeated addition'));
    active.selection = new vscode.Selection(line, 0, line, active.document.lineAt(line).text.length);
    const result = await vscode.commands.executeCommand<RecallResult>('codeMemory.recallContextForSelection');
    assert.ok(result);
    assert.ok(result.hits.some((h) => h.cell.source_kind === 'observation' && h.cell.source_id === edit.id), result.hits.map((h) => h.cell.title).join(' | '));

    // The window's vectors come from the machine's shared model host, a process of its own.
    const sockets = fs.readdirSync(hostFolder()).filter((f) => /^model-use-lite-.*\.sock$/.test(f));
    assert.equal(sockets.length, 1, `the shared model host's socket: ${sockets.join(', ')}`);
    const probe = await SharedModelEmbedder.connect({ provider: 'use-lite' });
    await probe.close();
    assert.notEqual(probe.hostPid, process.pid);
    assert.equal(probe.name, 'use-lite-512');

    // Memory anchored to code: a CodeLens on the file and on the edited function opens it.
    const lenses = await waitFor('the Code Memory lenses', async () => {
      const l = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri);
      const ours = (l ?? []).filter((x) => x.command?.command === 'codeMemory.recallContextForSelection');
      return ours.length >= 2 ? ours : undefined;
    }, 60_000);
    console.log(`      lenses: ${lenses.map((l) => `line ${l.range.start.line + 1}: ${l.command?.title}`).join(' | ')}`);
    assert.match(lenses[0].command?.title ?? '', /^Code Memory: .*\d+ edits? · \d+ sessions?/);
    assert.ok(lenses.some((l) => l.range.start.line === 4 && /edit/.test(l.command?.title ?? '')), 'a lens on multiply');
  });
});
