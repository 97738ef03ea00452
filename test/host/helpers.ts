// Shared by the extension's host suites: the extension's API and small waits on real events.
import Mocha from 'mocha';
import * as vscode from 'vscode';
import type { CodeMemoryExtensionApi } from '../../src/extension/extension';
import manifest from '../../package.json';

export const extensionId = `${manifest.publisher}.${manifest.name}`;

export async function codeMemoryApi(): Promise<CodeMemoryExtensionApi> {
  const extension = vscode.extensions.getExtension<CodeMemoryExtensionApi>(extensionId);
  if (!extension) throw new Error(`${extensionId} is not installed in this host`);
  return extension.isActive ? extension.exports : extension.activate();
}

export function workspaceFolder(): vscode.WorkspaceFolder {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the host was started without a workspace folder');
  return folder;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns a value (not undefined/false) or the time is up. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

export function parseList(json: string | null): string[] {
  if (!json) return [];
  const v: unknown = JSON.parse(json);
  return Array.isArray(v) ? v.map(String) : [];
}

/**
 * Prints a line the runner shows (a benchmark's report): through the reporter's own output, which
 * the code-server runner marks as the suites'. The extension host keeps its console's methods, so
 * a plain console.log there only reaches the workbench log.
 */
export function printLine(line: string): void {
  (Mocha.reporters.Base as unknown as { consoleLog: (...args: unknown[]) => void }).consoleLog(line);
}

/** A benchmark suite's `before` hook: it runs only when CODE_MEMORY_HOST_GREP names it (bench/hostBench.mjs). */
export function skipUnlessAsked(name: string): (this: Mocha.Context) => void {
  return function () {
    if (!(process.env.CODE_MEMORY_HOST_GREP ?? '').includes(name)) this.skip();
  };
}
