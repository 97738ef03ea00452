// Builds an McpServer exposing the tools of src/core/tools for one scope.
//
// The SDK validates arguments before a handler runs and answers a failure with its own
// text. retrieve_memory's contract needs `invalid_arguments` in structuredContent instead,
// so every tool is registered with a permissive carrier schema that publishes the strict
// JSON Schema (through zod metadata) while the tool itself parses with the strict schema.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import * as z from 'zod/v4';
import { toolDefinitions } from '../core/tools/registry';
import type { ToolContext, ToolDefinition, ToolResult } from '../core/tools/types';

export const SERVER_NAME = 'code-memory';
export const SERVER_VERSION = '0.1.0';

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

export function toCallToolResult(result: ToolResult): CallToolResult {
  const out: CallToolResult = { content: [{ type: 'text', text: result.text }], isError: result.isError };
  if (result.structured) out.structuredContent = result.structured;
  return out;
}

export interface ToolSpec {
  tool: ToolDefinition;
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
}

/** JSON Schema generation is not free: a server that builds an McpServer per request prepares these once. */
export function prepareToolSpecs(tools: readonly ToolDefinition[] = toolDefinitions): ToolSpec[] {
  return tools.map((tool) => ({ tool, inputSchema: carrier(jsonSchemaOf(tool.inputSchema, 'input')), outputSchema: outputCarrier(tool) as z.ZodObject }));
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

export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, title: 'Code Memory', version: SERVER_VERSION },
    {
      jsonSchemaValidator: (validator ??= new AjvJsonSchemaValidator()),
      capabilities: { tools: { listChanged: false } },
      instructions:
        options.instructions ??
        "Code Memory: this project's memory of past coding sessions, commits, decisions and conventions. Call retrieve_memory or recall_context before guessing about the project's history; use get_observations to read exact records; use remember to keep a decision the user approved.",
    },
  );
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
        return toCallToolResult(await tool.run(options.context(sessionId), args));
      },
    );
  }
  return server;
}
