// Builds an McpServer exposing the tools of src/core/tools for one scope.
//
// The SDK validates arguments before a handler runs and answers a failure with its own
// text. retrieve_memory's contract needs `invalid_arguments` in structuredContent instead,
// so every tool is registered with a permissive carrier schema that publishes the strict
// JSON Schema (through zod metadata) while the tool itself parses with the strict schema.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import * as z from 'zod/v4';
import { nameUuid } from '../core/store/cells';
import { toolDefinitions } from '../core/tools/registry';
import type { ToolContext, ToolDefinition, ToolResult } from '../core/tools/types';
import type { Scope } from '../core/model/records';
import { PRODUCT_VERSION } from '../core/version';

export const SERVER_NAME = 'code-memory';

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, target: 'draft-7' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** Accepts any object, publishes `published` in tools/list. */
function carrier(published: Record<string, unknown>): z.ZodObject {
  return z.looseObject({}).meta(published);
}

/** Output schema the SDK checks on the server side and publishes (contract JSON when given). */
function outputCarrier(tool: ToolDefinition): z.ZodType {
  if (!tool.outputJsonSchema) return tool.outputSchema;
  return tool.outputSchema.meta(tool.outputJsonSchema);
}

export function toCallToolResult(result: ToolResult, tool?: Pick<ToolDefinition, 'textOnly'>): CallToolResult {
  const out: CallToolResult = { content: [{ type: 'text', text: result.text }], isError: result.isError };
  if (result.structured && !tool?.textOnly) out.structuredContent = result.structured;
  return out;
}

/** Argument names the SDK's request parsing mangles: it drops `__proto__` and refuses `constructor`. */
const MANGLED_KEYS = ['__proto__', 'constructor'] as const;

/** What a call's arguments were before the SDK read them: some keys of an object, or a value that is no object. */
type Kept = { keys: Array<[string, unknown]> } | { whole: unknown };

/**
 * Keeps what the SDK would lose of a tools/call's arguments. Its request schema drops an argument
 * named `__proto__` (the tool would never see it, and its strict schema could not refuse it),
 * answers one named `constructor`, or arguments that are no object (an array, a string, null), with
 * a raw -32603 dump of its schema's complaint. Such arguments are taken out of the message before
 * the SDK reads it, kept by request id, and put back (`restore`) for the tool, whose schema refuses
 * them like any other bad argument (invalid_arguments). A call without a tool's name, or whose
 * params are no object, is answered here with -32602 and its id.
 */
class MangledArguments {
  /** By request id, from the call's arrival to its answer: ids may be used again after that. */
  private readonly kept = new Map<string | number, Kept>();

  /** Wraps a connected transport's message handler, and its sending of answers. */
  watch(transport: Transport): void {
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const m = message as { id?: string | number; method?: unknown; params?: unknown };
      if (m.method === 'tools/call' && m.id !== undefined) {
        const params = m.params as { name?: unknown; arguments?: unknown } | null | undefined;
        if (typeof params !== 'object' || params === null || Array.isArray(params) || typeof params.name !== 'string') {
          const error = { code: -32602, message: 'tools/call needs params {"name": <tool name>, "arguments": {...}}' };
          void transport.send({ jsonrpc: '2.0', id: m.id, error }).catch(() => undefined);
          return;
        }
        const args = params.arguments;
        if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
          this.kept.set(m.id, { whole: args });
          params.arguments = {};
        } else if (args !== undefined) {
          const found = MANGLED_KEYS.filter((k) => Object.prototype.hasOwnProperty.call(args, k));
          if (found.length > 0) {
            const rest: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(args)) if (!(found as string[]).includes(k)) rest[k] = v;
            this.kept.set(m.id, { keys: found.map((k) => [k, (args as Record<string, unknown>)[k]]) });
            params.arguments = rest;
          }
        }
      }
      inner?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      // Answered (a call of an unknown tool never reaches `restore`): what it kept goes.
      const answered = message as { id?: string | number; result?: unknown; error?: unknown };
      if (answered.id !== undefined && ('result' in answered || 'error' in answered)) this.kept.delete(answered.id);
      return send(message, options);
    };
  }

  /** The call's arguments as the client sent them (not necessarily an object: the tool refuses what is not). */
  restore(requestId: string | number, args: Record<string, unknown>): Record<string, unknown> {
    const kept = this.kept.get(requestId);
    if (!kept) return args;
    this.kept.delete(requestId);
    if ('whole' in kept) return kept.whole as Record<string, unknown>;
    const out: Record<string, unknown> = { ...args };
    for (const [k, v] of kept.keys) Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
    return out;
  }
}

export interface ToolSpec {
  tool: ToolDefinition;
  inputSchema: z.ZodObject;
  /** None for a tool that answers with text alone (ToolDefinition.textOnly). */
  outputSchema: z.ZodObject | undefined;
}

/** JSON Schema generation is not free: a server that builds an McpServer per request prepares these once. */
export function prepareToolSpecs(tools: readonly ToolDefinition[] = toolDefinitions): ToolSpec[] {
  return tools.map((tool) => ({ tool, inputSchema: carrier(jsonSchemaOf(tool.inputSchema, 'input')), outputSchema: tool.textOnly ? undefined : (outputCarrier(tool) as z.ZodObject) }));
}

/**
 * The MCP session of the user account, which the retrieve_memory page says the handshake's
 * Mcp-Session-Id is ("one per user account, 30-day TTL"): a local server has one user, so every
 * handshake with a project's server, over HTTP or stdio, gets this id, and a call without
 * session_id goes on with the account's prompt history (kept 30 days). Separate histories, for
 * concurrent chats, take a session_id of their own, as the page advises.
 */
export function accountSessionId(project: string): string {
  return nameUuid(`code-memory account session\0${project}`);
}

export interface McpServerOptions {
  /** Builds the context of one call; `transportSessionId` is the MCP session id when the transport has one. */
  context: (transportSessionId: string | undefined) => ToolContext;
  specs?: ToolSpec[];
  instructions?: string;
}

/**
 * The SDK gives each server a JSON Schema compiler of its own (Ajv), which it uses only to check
 * what a client answers to an elicitation, and these tools never ask one. Built per server, it
 * was 0.4 ms of every request to the stateless HTTP server (a server per request) and most of
 * its garbage; every server shares this one.
 */
let validator: AjvJsonSchemaValidator | undefined;

/** What a client is told at initialize: which project's memory this server serves (one; a window of several folders serves one of them), and how to use it. */
function defaultInstructions(scope: Scope): string {
  const served = `project ${JSON.stringify(scope.project)}${scope.branch ? ` (branch ${JSON.stringify(scope.branch)})` : ''}`;
  return `Code Memory: the memory of ${served} only: its past coding sessions, commits, decisions and conventions. Call retrieve_memory or recall_context before guessing about the project's history; use get_observations to read exact records; use remember to keep a decision the user approved.`;
}

export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, title: 'Code Memory', version: PRODUCT_VERSION },
    {
      jsonSchemaValidator: (validator ??= new AjvJsonSchemaValidator()),
      capabilities: { tools: { listChanged: false } },
      instructions: options.instructions ?? defaultInstructions(options.context(undefined).scope),
    },
  );
  const mangled = new MangledArguments();
  const connect = server.connect.bind(server);
  server.connect = async (transport: Transport): Promise<void> => {
    await connect(transport);
    mangled.watch(transport);
  };
  for (const { tool, inputSchema, outputSchema } of options.specs ?? prepareToolSpecs()) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema,
        outputSchema,
        annotations: { title: tool.title, ...tool.annotations },
      },
      async (args: Record<string, unknown>, extra) => {
        const headerSession = extra.requestInfo?.headers?.['mcp-session-id'];
        // Session ids are visible ASCII (MCP spec); anything else is ignored, not stored.
        const fromHeader = typeof headerSession === 'string' && /^[\x21-\x7e]{1,200}$/.test(headerSession) ? headerSession : undefined;
        const sessionId = extra.sessionId ?? fromHeader;
        return toCallToolResult(await tool.run(options.context(sessionId), mangled.restore(extra.requestId, args)), tool);
      },
    );
  }
  return server;
}
