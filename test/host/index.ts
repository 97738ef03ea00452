// Runs inside the VS Code extension host (loaded through the extensionTestsPath payload):
// mocha over every bundled suite next to this file. Output goes through console.log, which the
// host forwards to the runner; a rejected run() makes the host exit with code 1.
import * as fs from 'node:fs';
import * as path from 'node:path';
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

export async function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: 60_000,
    grep: process.env.CODE_MEMORY_HOST_GREP || undefined,
  });
  const suites = findSuites(__dirname);
  if (suites.length === 0) throw new Error(`No host suites (*.test.js) found under ${__dirname}; run the build first.`);
  for (const file of suites) mocha.addFile(file);
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} host test(s) failed`);
}
