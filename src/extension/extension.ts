import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { Scope } from '../core/model/records';
import { registerLanguageModelTools } from './agents/languageModelTools';
import { registerMcpDefinitionProvider } from './agents/mcpDefinitionProvider';
import { McpServerHost } from './agents/mcpServerHost';
import type { CaptureStats } from './capture/captureQueue';
import type { CapturedEntry } from './capture/capturedLog';
import { CapturedLog } from './capture/capturedLog';
import { CaptureService } from './capture/captureService';
import type { HeadState } from './capture/gitCapture';
import { SessionTracker } from './capture/sessionTracker';
import { registerCommands } from './commands/registerCommands';
import type { Container } from './container';
import { affectsConfig, reportSettingProblems } from './config';
import { EngineHost } from './engineHost';
import type { EngineClient } from './engineWorker/engineClient';
import { ScopeService } from './scopes';
import { StatusBar } from './statusBar';
import { TeamStatusBar } from './teamStatusBar';
import { LanguageModelSummariser } from './summariser/languageModelSummariser';
import { FreshnessService } from './freshness';
import { MemoryCodeLens } from './editor/memoryCodeLens';
import { MemoriesView } from './views/memoriesView';
import type { TreeSnapshot } from './views/snapshot';
import { RequestLogView } from './views/requestLogView';
import { SessionsView } from './views/sessionsView';
import { DetailsPanel } from './webviews/detailsPanel';
import { Navigation } from './webviews/navigation';
import { RecallPanel } from './webviews/recallPanel';
import { ServerInfoPanel } from './webviews/serverInfoPanel';
import { WindowShutdown } from './windowShutdown';
import { StoreWatcher, storeChanged } from './storeChanged';
import { redact } from '../core/capture/redact';

/** What activate() returns: used by the host tests and by other extensions. */
export interface CodeMemoryExtensionApi {
  readonly activationMs: number;
  /** Heavy modules already loaded when activate() returned: must be none. */
  readonly heavyModulesAtActivation: string[];
  readonly mcpDefinitionProviderRegistered: boolean;
  /** Where the store is (from codeMemory.storeLocation, else the CLI's default). */
  readonly storeUri: string;
  /** Opens the store if it is not open yet. */
  engine(): Promise<EngineClient>;
  isEngineOpen(): boolean;
  /** How long the last store open took (engine process started, store opened), or null before one. */
  storeOpenMs(): number | null;
  scopeFor(uri?: vscode.Uri): Promise<Scope | null>;
  /** Records the current focus period and unsaved edits, then writes all pending capture. */
  flushCapture(): Promise<void>;
  captureStats(): CaptureStats;
  captured(): readonly CapturedEntry[];
  headOf(uri: vscode.Uri): HeadState | undefined;
  gitReady(): Promise<void>;
  /** The MCP server of `folder`'s project (by default the active file's folder, else the first), started if need be. */
  mcpServer(folder?: vscode.Uri): Promise<{ url: string; token: string; project: string }>;
  /** Heavy modules (LanceDB, the embedding model) loaded in this process so far. */
  loadedHeavyModules(): string[];
  /** What the Memories view shows now, as plain data (labels, descriptions, context values, children). */
  memoriesTree(): Promise<TreeSnapshot[]>;
  /** The Sessions view as shown, every node expanded (projects, their documents, sessions). */
  sessionsTree(): Promise<TreeSnapshot[]>;
}

/** VS Code allows deactivate() about five seconds; the engine must be closed within them. */
const SHUTDOWN_MS = 4000;
/** Of those, what writing the pending capture may take before the session is ended. */
const CAPTURE_CLOSE_MS = 2000;

let shutdown: WindowShutdown | undefined;

export function activate(context: vscode.ExtensionContext): CodeMemoryExtensionApi {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Code Memory', { log: true });
  // Everything the window logs passes here (the engine's lines, its server's failures with their
  // stacks, the summariser's errors), and VS Code keeps the log on disk: redacted as stored text is.
  const log = (m: string): void => output.info(redact(m));

  const captured = new CapturedLog();
  const summariser = new LanguageModelSummariser(log);
  const engines = new EngineHost(context.extensionUri, { log, summarise: (observations, budget, ctx) => summariser.summarise(observations, budget, ctx) });
  const scopes = new ScopeService();
  const capture = new CaptureService(engines, scopes, captured, context.workspaceState);
  const sessions = new SessionTracker(capture, engines, scopes, captured);
  const navigation = new Navigation(scopes);
  const freshness = new FreshnessService(scopes);
  const details = new DetailsPanel(context.extensionUri, engines, navigation, freshness);
  const recall = new RecallPanel(context.extensionUri, engines, details, navigation);
  const serverInfo = new ServerInfoPanel(context.extensionUri);
  const mcp = new McpServerHost(engines, scopes, context.secrets, log);
  const sessionsView = new SessionsView(engines, scopes, freshness);
  const codeLens = new MemoryCodeLens(engines, scopes);
  const memoriesView = new MemoriesView(engines, scopes);
  const requestLogView = new RequestLogView(engines, scopes);
  const statusBar = new StatusBar(capture, engines);
  const teamStatusBar = new TeamStatusBar(engines);
  // What the shutdown writes through (capture, the engine, the two output channels) is
  // disposed by the shutdown, once it is over; see WindowShutdown.
  const closing = new WindowShutdown(async () => {
    try {
      await capture.close(CAPTURE_CLOSE_MS);
      if (engines.isOpen && capture.activeFolders.size > 0) await sessions.end(undefined, 'shutdown');
    } catch (err) {
      log(`Ending the session on shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    await mcp.stop().catch(() => undefined);
    await engines.close().catch(() => undefined);
  }, [capture, captured, engines, output]);
  shutdown = closing;
  context.subscriptions.push(scopes, sessions, details, recall, serverInfo, mcp, sessionsView, codeLens, memoriesView, requestLogView, statusBar, teamStatusBar, closing);

  const c: Container = { context, engines, scopes, capture, sessions, captured, navigation, details, recall, serverInfo, mcp, sessionsView, memoriesView, requestLogView, codeLens, statusBar, teamStatusBar, output };

  const mcpRegistration = registerMcpDefinitionProvider(mcp, String(context.extension.packageJSON.version));
  if (mcpRegistration) context.subscriptions.push(mcpRegistration);
  context.subscriptions.push(...registerLanguageModelTools(engines, scopes, () => void storeChanged(c)), ...registerCommands(c, { mcpRegistered: () => mcpRegistration !== undefined }));
  // What another process (the CLI, another window) writes or forgets shows within seconds.
  const watcher = new StoreWatcher(c, () => vscode.window.state.focused || memoriesView.tree.visible || sessionsView.tree.visible);
  context.subscriptions.push(watcher, vscode.window.onDidChangeWindowState((s) => void (s.focused && watcher.look())));

  context.subscriptions.push(
    capture.onDidCapture(() => {
      sessionsView.refresh();
      codeLens.refresh();
    }),
    sessions.onDidEndSession(() => {
      sessionsView.refresh();
      memoriesView.refresh();
      codeLens.refresh();
    }),
    engines.onDidOpen(() => {
      sessionsView.refresh();
      memoriesView.refresh();
      codeLens.refresh();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('codeMemory')) reportSettingProblems((m) => output.warn(m));
      // A new store, embedder or reranker takes effect on the next use; the server follows the store.
      if (affectsConfig(e, 'storeLocation') || affectsConfig(e, 'embedding') || affectsConfig(e, 'rerank') || affectsConfig(e, 'teamStore') || affectsConfig(e, 'store')) {
        await capture.queue.flush().catch(() => undefined);
        await mcp.stop();
        await engines.close();
        sessionsView.refresh();
        memoriesView.refresh();
        requestLogView.refresh();
      } else if (affectsConfig(e, 'server.port')) {
        await mcp.stop();
      }
    }),
  );


  // A setting typed wrong in settings.json is said once, with the value used instead.
  reportSettingProblems((m) => output.warn(m));
  const activationMs = performance.now() - started;
  log(`Activated in ${activationMs.toFixed(1)} ms (store: ${engines.storeUri}; opened on first use).`);

  // The engine lives in its own process; none of this may ever be loaded in the extension host.
  const heavyModules = (): string[] => Object.keys(require.cache).filter((k) => /[\\/](@lancedb|@energetic-ai|@tensorflow|apache-arrow|gpt-tokenizer)[\\/]|engineWorker\.js$/.test(k));
  return {
    activationMs,
    heavyModulesAtActivation: heavyModules(),
    mcpDefinitionProviderRegistered: mcpRegistration !== undefined,
    get storeUri() {
      return engines.storeUri;
    },
    engine: () => engines.get(),
    isEngineOpen: () => engines.isOpen,
    storeOpenMs: () => engines.openedInMs,
    scopeFor: async (uri) => {
      const folder = uri ? vscode.workspace.getWorkspaceFolder(uri) : scopes.currentFolder();
      return folder ? scopes.scopeFor(folder.uri.toString()) : null;
    },
    flushCapture: () => capture.checkpoint(),
    captureStats: () => ({ ...capture.queue.stats, byKind: { ...capture.queue.stats.byKind } }),
    captured: () => captured.entries(),
    headOf: (uri) => {
      const folder = vscode.workspace.getWorkspaceFolder(uri);
      return folder ? capture.git.headOf(folder.uri.toString()) : undefined;
    },
    gitReady: () => capture.git.ready,
    mcpServer: async (folder) => {
      const wanted = folder && vscode.workspace.getWorkspaceFolder(folder);
      if (folder && !wanted) throw new Error(`${folder.toString()} is in no folder of this window`);
      const s = await mcp.start(wanted);
      return { url: s.url, token: s.token, project: s.project };
    },
    loadedHeavyModules: heavyModules,
    memoriesTree: () => memoriesView.snapshot(),
    sessionsTree: () => sessionsView.snapshot(),
  };
}

export async function deactivate(): Promise<void> {
  const closing = shutdown;
  shutdown = undefined;
  // Never hang the window's close on the store.
  await closing?.run(SHUTDOWN_MS);
}
