// Loads extension modules with `vscode` resolved to a stub, for specs that run them on plain Node.
// The modules bind `vscode` at load time, so they load afresh (another spec may have loaded them
// with its own stub) and the module cache is put back after.

import * as path from 'node:path';

const extensionDir = path.join(path.resolve(__dirname, '../..'), 'src', 'extension') + path.sep;

/** Runs `load` (which requires the modules under test) while `vscode` resolves to `stub`. */
export function withVscodeStub<T>(stub: unknown, load: () => T): T {
  const cachedBefore = new Map(Object.entries(require.cache).filter(([file]) => file.startsWith(extensionDir)));
  for (const file of cachedBefore.keys()) delete require.cache[file];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Module = require('node:module') as { _load: (request: string, ...rest: unknown[]) => unknown };
  const originalLoad = Module._load;
  Module._load = function (this: unknown, request: string, ...rest: unknown[]) {
    return request === 'vscode' ? stub : originalLoad.call(this, request, ...rest);
  };
  try {
    return load();
  } finally {
    Module._load = originalLoad;
    for (const [file, module] of cachedBefore) require.cache[file] = module;
  }
}

/** vscode.EventEmitter as the specs need it: listeners called in order, a disposed one never again. */
export class EventEmitter<T> {
  private listeners: Array<(e: T) => unknown> = [];
  readonly event = (listener: (e: T) => unknown): { dispose(): void } => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) void l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

/** MarkdownString as VS Code's (src/vs/base/common/htmlContent.ts): appendText backslash-escapes markdown syntax. */
export class MarkdownString {
  isTrusted: boolean | undefined = undefined;
  supportHtml = false;
  constructor(public value = '') {}
  appendMarkdown(s: string): this {
    this.value += s;
    return this;
  }
  appendText(s: string): this {
    this.value += s
      .replace(/[\\`*_{}[\]()#+\-!~]/g, '\\$&')
      .replace(/([ \t]+)/g, (_m, g: string) => '&nbsp;'.repeat(g.length))
      .replace(/>/g, '\\>')
      .replace(/\n/g, '\n\n');
    return this;
  }
}
