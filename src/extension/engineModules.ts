import { existsSync } from 'node:fs';
import * as path from 'node:path';

export type EngineModules = typeof import('./engineBundle');

/**
 * Loads the heavy half of the extension on first need. Bundled, it is dist/engine.js next to
 * dist/extension.js; the require is built at run time so esbuild does not inline it.
 */
export function loadEngineModules(): EngineModules {
  const bundled = path.join(__dirname, 'engine.js');
  const target = existsSync(bundled) ? bundled : path.join(__dirname, 'engineBundle');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(target) as EngineModules;
}
