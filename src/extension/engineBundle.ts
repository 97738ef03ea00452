// Entry of the second extension bundle (dist/engine.js): everything heavy the extension needs
// only after activation: the engine and LanceDB, the embedder, the tools, the MCP server, git
// import. Kept out of dist/extension.js so activating the extension parses a small file and
// loads none of it (see engineModules.ts).

export { MemoryEngine } from '../core/engine';
export { ExtractiveSummariser } from '../core/compress/summariser';
export { WorkerEmbedder } from '../core/embed/workerEmbedder';
export { startHttpServer } from '../mcp/httpServer';
export { findTool, toolDefinitions } from '../core/tools/registry';
export { importGitHistory } from '../core/capture/gitImport';
