// REST routes on the MCP server's port and token:
//   GET  /v1/nodes/{node_id}      hydrate a recall result: the cell and its source record
//   GET  /v1/dev/mcp-requests     the request log (retrieve_memory calls), newest first
//   POST /v1/observations         ingest observations from agent hooks
//   GET  /v1/health               project, store and counts (for doctor and the extension)

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MemoryEngineApi } from '../core/api';
import type { Scope } from '../core/model/records';
import type { ToolContext } from '../core/tools/types';
import { errorCode } from '../core/tools/types';
import { observe } from '../core/tools/write';
import { sendJson } from './httpJson';

export interface RestContext {
  engine: MemoryEngineApi;
  scope: Scope;
  readJson(): Promise<{ value: unknown } | undefined>;
  context(): ToolContext;
}

const NODE_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const NODE_ID_HELP = 'node ids are UUIDs, as recall returns them, e.g. GET /v1/nodes/6f9619ff-8b86-d011-b42d-00cf4fc964ff';
const LIMIT = /^[0-9]{1,4}$/;

/** The decoded path segment, or undefined when its percent-encoding is malformed. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendJson(res, 405, { error: 'method_not_allowed', message: `use ${allow}` }, { allow });
}

/**
 * `path`: the request's path as sent, its literal dot segments resolved (a percent-encoded one
 * stays, so /v1/nodes/%2e%2e is a malformed node id); `query`: its query string's parameters.
 */
export async function handleRest(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, ctx: RestContext): Promise<void> {
  if (path.startsWith('/v1/nodes/')) {
    if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
    const id = decodeSegment(path.slice('/v1/nodes/'.length));
    if (id === undefined) return sendJson(res, 400, { error: 'invalid_node_id', message: `the node id is not valid percent-encoding; ${NODE_ID_HELP}` });
    if (!NODE_ID.test(id)) return sendJson(res, 400, { error: 'invalid_node_id', message: NODE_ID_HELP });
    const node = await ctx.engine.getNode(id.toLowerCase(), ctx.scope);
    if (!node) return sendJson(res, 404, { error: 'not_found', message: `no node ${id} in project '${ctx.scope.project}'` });
    return sendJson(res, 200, node);
  }
  if (path === '/v1/dev/mcp-requests') {
    if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
    const raw = query.get('limit');
    const limit = raw === null ? 50 : LIMIT.test(raw) ? Number(raw) : 0;
    if (limit < 1 || limit > 1000) return sendJson(res, 400, { error: 'invalid_limit', message: 'limit must be a whole number from 1 to 1000 in digits, e.g. ?limit=50' });
    const requests = await ctx.engine.listRequests(ctx.scope, limit);
    return sendJson(res, 200, { requests });
  }
  if (path === '/v1/observations') {
    if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
    const body = await ctx.readJson();
    if (!body) return;
    // Accept {observations: [...]}, a bare array, or one observation object.
    const value = body.value;
    const args = Array.isArray(value) ? { observations: value } : value && typeof value === 'object' && 'observations' in value ? value : { observations: [value] };
    try {
      const out = await observe(ctx.context(), args);
      return sendJson(res, 201, out);
    } catch (error) {
      // Refused input (the tool's checks, or the store's: a NUL in a branch) is the caller's 400.
      const code = errorCode(error);
      if (code !== 'internal_error') return sendJson(res, 400, { error: code, message: (error as Error).message });
      throw error;
    }
  }
  if (path === '/v1/health') {
    if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
    const stats = await ctx.engine.stats(ctx.scope);
    return sendJson(res, 200, { ok: true, project: ctx.scope.project, branch: ctx.scope.branch ?? null, stats });
  }
  return sendJson(res, 404, { error: 'not_found', message: 'routes: POST /v1/mcp/memory, GET /v1/nodes/{id}, GET /v1/dev/mcp-requests, POST /v1/observations, GET /v1/health' });
}
