// The engine's process, a child of the extension host (see EngineClient for why not a thread).
// The host only sends plain messages here; everything that costs CPU (loading LanceDB, the
// tokenizer and the tools, text preparation, compression, the MCP server's request handling)
// happens in this process, never on the extension host's thread.
// Bundled as dist/engineWorker.js; no `vscode` here.

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { MemoryEngineApi } from '../../core/api';
import { REMOTE_ENGINE_METHODS } from '../../core/api';
import type { Summariser, SummaryContext, SummaryResult } from '../../core/compress/summariser';
import { ExtractiveSummariser } from '../../core/compress/summariser';
import type { Embedder } from '../../core/embed/embedder';
import { createEmbedder } from '../../core/embed/factory';
import type { EmbedderConfig } from '../../core/embed/factory';
import { MemoryEngine } from '../../core/engine';
import { writePrivateLines } from '../../core/privateFiles';
import type { Observation, Scope } from '../../core/model/records';
import { ToolError } from '../../core/tools/types';
import type { RunningHttpServer } from '../../mcp/httpServer';
import type { ToMainMessage, ToWorkerMessage, WorkerOpenOptions } from './protocol';
import { StoreChanges } from './storeChanges';

if (!process.send) throw new Error('engineWorker.js runs as a child process of the Code Memory extension');
/** Sends to the host while it listens; a host gone has nobody to answer. */
const post = (m: ToMainMessage, then?: () => void): void => {
  if (process.connected) process.send!(m, undefined, {}, () => then?.());
  else then?.();
};
const log = (message: string): void => post({ type: 'log', message });

const ENGINE_METHODS = new Set<string>(REMOTE_ENGINE_METHODS);
/**
 * The calls that write to or forget from the tables the window shows: the window brings its views
 * up to date after them itself, so what they change is no change from elsewhere (see
 * StoreChanges). One left out costs one refresh more; a read listed here could hide another
 * process's change made while it ran (so the tools, mostly reads, are not listed).
 */
const WRITES = new Set<string>([
  'observe', 'observeReport', 'capture', 'flush', 'remember', 'endSession', 'endCurrentSession', 'touch', 'setStatus', 'resolveConflict', 'editMemory', 'promote', 'forget',
  'replaceDocuments', 'share', 'unshare', 'syncTeam', 'importFromFile', 'importGitHistory',
]);

// The tools, the MCP server and the git import load on first use, after the store is open:
// their modules (the tools' zod schemas, the MCP SDK, ajv) were a third of this engine's start
// (Node 20, 100,000-cell store, alternating: ready after 556-625 ms with them loaded first,
// 396-436 without).
const toolRegistry = () => import('../../core/tools/registry');

let languageModelSummaries = false;
let nextSummary = 1;
const summaries = new Map<number, (fields: SummaryResult | null) => void>();
const aborts = new Map<number, AbortController>();
/** The window's loopback servers, one per project. */
const servers = new Map<string, RunningHttpServer>();
let changes: StoreChanges | null = null;
/** The calls under way, which a close waits for. */
const inFlight = new Set<Promise<void>>();
/** Set once a close is asked: later calls are answered with an error, never run. */
let closing = false;

/** Asks the extension host for a language-model summary; the extractive one otherwise. */
class BridgeSummariser implements Summariser {
  private readonly extractive = new ExtractiveSummariser();
  readonly name = this.extractive.name;

  async summarise(observations: Observation[], budgetTokens: number, context?: SummaryContext): Promise<SummaryResult> {
    if (languageModelSummaries && observations.length > 0 && process.connected) {
      const id = nextSummary++;
      const fields = await new Promise<SummaryResult | null>((resolve) => {
        summaries.set(id, resolve);
        post({ type: 'summarise', id, observations, budgetTokens, context });
      });
      // The stored summariser name says which wrote it: the model, or the extractive fallback.
      if (fields) return { ...fields, summariser: fields.summariser ?? 'language-model' };
    }
    return this.extractive.summarise(observations, budgetTokens, context);
  }
}

async function startEmbedder(config: EmbedderConfig): Promise<Embedder | null> {
  try {
    const { startEmbedder: start } = await import('../../core/embed/start');
    // Embedding runs in the shared model host or a thread of its own, so a long batch never
    // delays a search on this one.
    return await start(config, log).catch(() => createEmbedder(config));
  } catch (err) {
    log(`The ${config.provider} embedder could not start (${err instanceof Error ? err.message : String(err)}); search uses full text only. Change codeMemory.embedding.provider to fix this.`);
    return null;
  }
}

async function start(options: WorkerOpenOptions): Promise<{ engine: MemoryEngine; embedder: Embedder | null }> {
  // The model loads while the store opens; the store is what the first answer waits for.
  const loading = options.embedder ? startEmbedder(options.embedder) : Promise.resolve(null);
  const engine = await MemoryEngine.open({
    storeUri: options.storeUri,
    embedder: loading.then((e) => e ?? 'none'),
    reranker: options.reranker,
    summariser: new BridgeSummariser(),
    sessionIdleMs: options.sessionIdleMs,
    team: options.team,
    objectStore: options.objectStore,
    requestLogRetention: options.requestLogRetention,
    logger: log,
  });
  return { engine, embedder: await loading };
}

async function dispatch(engine: MemoryEngineApi, id: number, method: string, args: unknown[]): Promise<unknown> {
  if (method === 'storeChangedElsewhere') return changes?.changed() ?? false;
  if (changes && WRITES.has(method)) return changes.own(() => run(engine, id, method, args));
  return run(engine, id, method, args);
}

async function run(engine: MemoryEngineApi, id: number, method: string, args: unknown[]): Promise<unknown> {
  if (ENGINE_METHODS.has(method)) {
    return (engine as unknown as Record<string, (...a: unknown[]) => unknown>)[method](...args);
  }
  switch (method) {
    case 'exportToFile': {
      const [path, scope] = args as [string, Scope | null];
      // An export holds memory: only its owner may read it.
      return writePrivateLines(path, (write) => engine.exportJsonl(write, scope));
    }
    case 'importFromFile': {
      const [path] = args as [string];
      // Read twice (checked whole, then written): opened again rather than held in memory.
      return engine.importJsonl(() => createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity }));
    }
    case 'importGitHistory': {
      const [repoPath, scope] = args as [string, Scope];
      const { importGitHistory } = await import('../../core/capture/gitImport');
      const abort = new AbortController();
      aborts.set(id, abort);
      try {
        return await importGitHistory(engine, repoPath, { scope, signal: abort.signal, onProgress: (done, total) => post({ type: 'progress', id, done, total }) });
      } finally {
        aborts.delete(id);
      }
    }
    case 'startHttpServer': {
      const [opts] = args as [{ scope: Scope; port: number; token: string; repoRoot?: string }];
      await stopServers(opts.scope.project);
      const { startHttpServer } = await import('../../mcp/httpServer');
      const server = await startHttpServer({ engine, scope: opts.scope, port: opts.port, token: opts.token, repoRoot: opts.repoRoot, log });
      // One server a project: another start of it that ended meanwhile gives way, never left listening untracked.
      const previous = servers.get(opts.scope.project);
      servers.set(opts.scope.project, server);
      await previous?.close().catch(() => undefined);
      return { url: server.url, baseUrl: server.baseUrl, port: server.port, token: server.token };
    }
    case 'stopHttpServer': {
      const [project] = args as [string | undefined];
      await stopServers(project);
      return null;
    }
    case 'invokeTool': {
      const [name, scope, input, transportSessionId] = args as [string, Scope, unknown, string | undefined];
      const tool = (await toolRegistry()).findTool(name);
      if (!tool) throw new ToolError('unknown_tool', `no tool named ${name}`);
      return tool.run({ engine, scope, transportSessionId, log }, input);
    }
    case 'toolList':
      return (await toolRegistry()).toolDefinitions.map((t) => ({ name: t.name, title: t.title, readOnly: t.annotations.readOnlyHint }));
    default:
      throw new Error(`unknown engine method ${method}`);
  }
}

/** Closes the server of `project`, or every server. */
async function stopServers(project?: string): Promise<void> {
  const closing = [...servers].filter(([p]) => project === undefined || p === project);
  for (const [p] of closing) servers.delete(p);
  await Promise.all(closing.map(([, s]) => s.close()));
}

/** The host's first message: what to open. */
function openOptions(): Promise<WorkerOpenOptions> {
  return new Promise((resolve) => {
    const first = (m: ToWorkerMessage): void => {
      if (m.type !== 'open') return;
      process.off('message', first);
      resolve(m.options);
    };
    process.on('message', first);
  });
}

/** The store's close once it is open (null when it did not open); set when the open starts. */
let opened: Promise<(() => Promise<void>) | null> | null = null;

process.once('disconnect', () => {
  // A summary the host was asked for is written by the extractive summariser instead.
  for (const resolve of summaries.values()) resolve(null);
  summaries.clear();
  // The host has gone (its window closed, it was killed): what it wrote is flushed, once the store
  // is open if it was opening (not cut off mid-open), then the process ends.
  void (opened ?? Promise.resolve(null)).then((stop) => stop?.()).finally(() => process.exit(0));
});

void (async () => {
  const options = await openOptions();
  languageModelSummaries = options.languageModelSummaries;
  opened = start(options).then(
    ({ engine, embedder }) => serve(engine, embedder),
    (err: unknown) => {
      post({ type: 'failed', error: err instanceof Error ? err.message : String(err) }, () => process.exit(1));
      return null;
    },
  );
})();

/** Answers the host's calls on the open store; returns its close (the calls under way end first). */
function serve(engine: MemoryEngine, embedder: Embedder | null): () => Promise<void> {
  changes = StoreChanges.of(engine.store);
  let closed: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (closed ??= (async () => {
      closing = true;
      await stopServers().catch(() => undefined);
      // The calls under way end first: the store is not closed under a read or write of it.
      await Promise.allSettled(inFlight);
      // A server a start under way opened meanwhile serves a closing store: it closes too.
      await stopServers().catch(() => undefined);
      await engine.close();
      await embedder?.close?.();
    })());
  process.on('message', (m: ToWorkerMessage) => {
    switch (m.type) {
      case 'call':
        if (m.method === 'close') {
          // Answered once closed; the process then ends. The host stops waiting after a while and
          // leaves this to finish.
          void stop()
            .catch((err: unknown) => log(`The store did not close cleanly: ${err instanceof Error ? err.message : String(err)}`))
            .then(() => post({ type: 'result', id: m.id, value: null }, () => process.exit(0)));
          return;
        }
        if (closing) {
          // Nothing reaches a store being closed (a read of a closed table is no error a call can catch).
          post({ type: 'error', id: m.id, error: 'The Code Memory engine is closed.' });
          return;
        }
        {
          const answered = dispatch(engine, m.id, m.method, m.args).then(
            (value) => post({ type: 'result', id: m.id, value }),
            (err: unknown) =>
              post({ type: 'error', id: m.id, error: err instanceof Error ? err.message : String(err), code: err instanceof ToolError ? err.code : undefined }),
          );
          inFlight.add(answered);
          void answered.finally(() => inFlight.delete(answered));
        }
        return;
      case 'cancel':
        aborts.get(m.id)?.abort();
        return;
      case 'summary':
        summaries.get(m.id)?.(m.fields);
        summaries.delete(m.id);
        return;
      case 'setLanguageModelSummaries':
        languageModelSummaries = m.enabled;
        return;
      case 'open':
        return;
    }
  });
  post({ type: 'ready', storeUri: engine.storeUri, embedder: embedder?.name ?? null });
  return stop;
}
