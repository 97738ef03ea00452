export const SERVER_LABEL = 'Code Memory';
/** Same path as src/mcp/httpServer.ts MCP_PATH; repeated so the provider need not load the server module. */
export const MCP_PATH_FALLBACK = '/v1/mcp/memory';
