// The CLI's bundles, shared by esbuild.config.mjs and the CLI tests (which build them into a
// folder of their own), so the tests run the very split users get:
//   cli.js          entry, command specs and help only (starts in about the time Node itself takes)
//   cliCommands.js  every command's implementation (engine, LanceDB client, MCP SDK, tokenizer),
//                   loaded by cli.js only when a command runs
//   embedWorker.js  the embedding worker thread the commands start
//   modelHost.js    the shared model host the commands (and the extension) start (src/core/embed/sharedModel/host.ts)
//   upkeepChild.js  the process that compacts a large table or builds its vector index (src/core/store/upkeepProcess.ts)
import { chmod } from 'node:fs/promises';
import path from 'node:path';

export const COMMANDS_BUNDLE = 'cliCommands.js';

/**
 * Keeps main.ts's `import('./commands/implementations')` out of cli.js: the import becomes a
 * require of the sibling bundle cliCommands.js, so nothing of it is parsed on `--help`.
 */
export function lazyCommandsBundle() {
  return {
    name: 'lazy-commands-bundle',
    setup(build) {
      build.onResolve({ filter: /^\.\/commands\/implementations$/ }, (args) =>
        args.importer.endsWith(path.join('src', 'cli', 'main.ts')) ? { path: `./${COMMANDS_BUNDLE}`, external: true } : undefined,
      );
    },
  };
}

function makeExecutable(outfile) {
  return {
    name: 'make-executable',
    setup(build) {
      build.onEnd(async (result) => {
        if (result.errors.length === 0) await chmod(outfile, 0o755);
      });
    },
  };
}

/** esbuild options for the CLI's bundles, written into `outdir`; merge them over common options. */
export function cliBundles(root, outdir) {
  const cli = path.join(outdir, 'cli.js');
  return [
    {
      entryPoints: [path.join(root, 'src/cli/main.ts')],
      outfile: cli,
      banner: { js: '#!/usr/bin/env node' },
      plugins: [lazyCommandsBundle(), makeExecutable(cli)],
    },
    { entryPoints: [path.join(root, 'src/cli/commands/implementations.ts')], outfile: path.join(outdir, COMMANDS_BUNDLE) },
    { entryPoints: [path.join(root, 'src/core/embed/worker.ts')], outfile: path.join(outdir, 'embedWorker.js') },
    { entryPoints: [path.join(root, 'src/core/embed/sharedModel/host.ts')], outfile: path.join(outdir, 'modelHost.js') },
    { entryPoints: [path.join(root, 'src/core/store/upkeepChild.ts')], outfile: path.join(outdir, 'upkeepChild.js') },
  ];
}
