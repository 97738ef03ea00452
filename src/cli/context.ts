// What every CLI command's implementation shares: the scope, opening the engine, output.

import { folderProject, remoteProject } from '../core/capture/project';
import { startEmbedder } from '../core/embed/start';
import { MemoryEngine } from '../core/engine';
import * as path from 'node:path';
import type { MemoryEngineApi } from '../core/api';
import type { Embedder } from '../core/embed/embedder';
import type { Scope } from '../core/model/records';
import type { GlobalOptions, Io } from './options';
import { gitAuthor } from '../core/team/shareRows';

/**
 * The project a command reads and writes: --project, else the folder's git remote or name made unique; with
 * the repository's default branch when the folder is a clone of that project.
 */
export async function resolveScope(options: GlobalOptions, folder = options.cwd): Promise<Scope> {
  // With --project the folder is only asked for its remote (a folder without one is not given a name of its own).
  const ofFolder = options.project ? await remoteProject(path.resolve(folder)) : await folderProject(path.resolve(folder));
  const project = options.project ?? ofFolder.project ?? '';
  const defaultBranch = project === ofFolder.project ? ofFolder.defaultBranch : null;
  return { project, ...(options.branch ? { branch: options.branch } : {}), ...(defaultBranch ? { defaultBranch } : {}) };
}

/**
 * Opens the engine on the store. `withEmbedder: false` for commands that never embed (stats,
 * node, export...), so they do not pay for loading a model; nor do they search, so no reranker.
 * `serves`: the scope a server answers for.
 */
export async function openEngine(options: GlobalOptions, io: Io, withEmbedder: boolean, serves?: Scope, open: { rebuildMeta?: boolean } = {}): Promise<MemoryEngineApi> {
  process.env.LANCEDB_LOG ??= 'error';
  const config = withEmbedder ? options.embedding : null;
  // The model loads (or the shared model host is reached) while the store opens.
  const embedder: Promise<Embedder | 'none'> = config
    ? startEmbedder(config, (m) => io.stderr.write(`warning: ${m}\n`)).catch((error: unknown) => {
        io.stderr.write(
          `warning: the ${config.provider} embedder could not start (${error instanceof Error ? error.message : String(error)}); searching by full text only. Run \`code-memory doctor\`.\n`,
        );
        return 'none' as const;
      })
    : Promise.resolve('none');
  const team = options.teamStore ? { uri: options.teamStore, author: await gitAuthor(options.cwd) } : undefined;
  return MemoryEngine.open({
    storeUri: options.store,
    embedder,
    team,
    requestLogRetention: options.requestLogRetention,
    sessionIdleMs: options.sessionIdleMinutes !== undefined ? options.sessionIdleMinutes * 60_000 : undefined,
    reranker: withEmbedder ? options.reranker : null,
    // A server's first search should not wait for its project's full-text view.
    warmProjects: serves ? [serves.project] : undefined,
    logger: (m: string) => io.stderr.write(`${m}\n`),
    rebuildMeta: open.rebuildMeta,
  });
}

export function writeJson(io: Io, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
