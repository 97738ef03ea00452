import type * as vscode from 'vscode';
import type { McpServerHost } from './agents/mcpServerHost';
import type { CapturedLog } from './capture/capturedLog';
import type { CaptureService } from './capture/captureService';
import type { SessionTracker } from './capture/sessionTracker';
import type { MemoryCodeLens } from './editor/memoryCodeLens';
import type { EngineHost } from './engineHost';
import type { ScopeService } from './scopes';
import type { StatusBar } from './statusBar';
import type { TeamStatusBar } from './teamStatusBar';
import type { MemoriesView } from './views/memoriesView';
import type { RequestLogView } from './views/requestLogView';
import type { SessionsView } from './views/sessionsView';
import type { DetailsPanel } from './webviews/detailsPanel';
import type { Navigation } from './webviews/navigation';
import type { RecallPanel } from './webviews/recallPanel';
import type { ServerInfoPanel } from './webviews/serverInfoPanel';

/** Every service of the window, built once in activate(); commands receive it. */
export interface Container {
  readonly context: vscode.ExtensionContext;
  readonly engines: EngineHost;
  readonly scopes: ScopeService;
  readonly capture: CaptureService;
  readonly sessions: SessionTracker;
  readonly captured: CapturedLog;
  readonly navigation: Navigation;
  readonly details: DetailsPanel;
  readonly recall: RecallPanel;
  readonly serverInfo: ServerInfoPanel;
  readonly mcp: McpServerHost;
  readonly sessionsView: SessionsView;
  readonly memoriesView: MemoriesView;
  readonly requestLogView: RequestLogView;
  readonly codeLens: MemoryCodeLens;
  readonly statusBar: StatusBar;
  readonly teamStatusBar: TeamStatusBar;
  readonly output: vscode.LogOutputChannel;
}

export interface CommandDefinition {
  id: string;
  run(...args: unknown[]): unknown;
  /** It may write to or forget from the store: the registrar then brings up to date all that shows the store. */
  changesStore?: boolean;
}
