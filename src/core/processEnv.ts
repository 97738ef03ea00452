// The environment of the Node processes that hold a store: the servers agents start from the
// configuration the extension writes for them, and the upkeep child the store starts itself.

export const STORE_PROCESS_ENV: Readonly<Record<string, string>> = {
  // The runtime may be Electron's binary (desktop VS Code's, for the bundled CLI): run it as Node.
  ELECTRON_RUN_AS_NODE: '1',
  LANCEDB_LOG: 'error',
  // glibc's allocator gives each thread that allocates an arena of its own, up to eight per
  // core, and LanceDB's reader threads keep theirs; two arenas hold the same work. Read by glibc
  // when the process starts, so it cannot be set from inside; ignored on macOS and Windows.
  MALLOC_ARENA_MAX: '2',
  // V8's young generation grows to 16 MB a half by default; a server's garbage is small and
  // short-lived, and 4 MB halves hold it: about 20 MB less resident memory at 100,000 cells,
  // with the same latencies (see the README's Benchmarks). Also set before the process starts;
  // an Electron build whose nodeOptions fuse is off ignores it.
  NODE_OPTIONS: '--max-semi-space-size=4',
};

/** `env` for a child process that opens a store: STORE_PROCESS_ENV, under what the parent sets itself. */
export function storeChildEnv(parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...STORE_PROCESS_ENV, ...parent, ELECTRON_RUN_AS_NODE: '1' };
}
