// Runs inside the VS Code extension host (loaded through the extensionTestsPath payload):
// mocha over every bundled suite next to this file. Output goes through console.log, which the
// host forwards to the runner; a rejected run() makes the host exit with code 1.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';

function findSuites(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findSuites(full));
    else if (entry.name.endsWith('.test.js')) found.push(full);
  }
  return found.sort();
}

// The workbench forwards all of its own log lines too; this prefix lets the runner show only
// what the suites print (runCodeServer.mjs strips it; CODE_MEMORY_HOST_VERBOSE shows the rest).
const marker = '\u2063[host-test] ';

const mark = (args: unknown[]): string =>
  format(...args)
    .split('\n')
    .map((line) => marker + line)
    .join('\n');

function markConsole(): () => void {
  const original = { log: console.log, info: console.info, warn: console.warn, error: console.error };
  for (const method of ['log', 'info', 'warn', 'error'] as const) {
    console[method] = (...args: unknown[]) => original[method](mark(args));
  }
  // Reporters print through Base.consoleLog, captured from console.log when mocha loaded.
  const base = Mocha.reporters.Base as unknown as { consoleLog: (...args: unknown[]) => void };
  const originalReporterLog = base.consoleLog;
  base.consoleLog = (...args: unknown[]) => original.log(mark(args));
  return () => {
    Object.assign(console, original);
    base.consoleLog = originalReporterLog;
  };
}

export async function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: 60_000,
    grep: process.env.CODE_MEMORY_HOST_GREP || undefined,
  });
  // A window of two repositories runs the *.twoFolders suites; any other window the rest (runCodeServer.mjs).
  const twoFolders = process.env.CODE_MEMORY_HOST_SUITES === 'twoFolders';
  const suites = findSuites(__dirname).filter((file) => file.endsWith('.twoFolders.test.js') === twoFolders);
  if (suites.length === 0) throw new Error(`No host suites (*.test.js) found under ${__dirname}; run the build first.`);
  for (const file of suites) mocha.addFile(file);
  // Only the code-server runner needs the prefix; desktop runs print straight to the terminal.
  const restore = process.env.CODE_MEMORY_HOST_MARK === '1' ? markConsole() : () => {};
  let failures: number;
  try {
    failures = await new Promise<number>((resolve) => mocha.run(resolve));
  } finally {
    restore();
  }
  if (failures > 0) throw new Error(`${failures} host test(s) failed`);
}
