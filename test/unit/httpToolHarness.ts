// One engine in a temp folder behind the real HTTP server, and a real MCP client talking to it:
// what the tests of the tools' contracts share. Called inside a describe, it adds the hooks.
import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { MemoryEngineApi } from '../../src/core/api';
import type { MemoryEngine } from '../../src/core/engine';
import type { Scope } from '../../src/core/model/records';
import { startHttpServer } from '../../src/mcp/httpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { openTestEngine, removeDir } from './mcpFixture';

export type CallResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

export const SCOPE: Scope = { project: 'github.com/acme/app' };
export const OTHER: Scope = { project: 'github.com/evil/other' };

export async function connectClient(server: RunningHttpServer, name = 'contract-test'): Promise<Client> {
  const client = new Client({ name, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } }));
  return client;
}

export interface HttpToolHarness {
  readonly engine: MemoryEngine;
  readonly dir: string;
  readonly server: RunningHttpServer;
  readonly client: Client;
  call(name: string, args?: Record<string, unknown>, client?: Client): Promise<CallResult>;
  /**
   * The call's structuredContent is valid under the output schema the server publishes; a tool
   * that publishes none (recall_context: text alone) sends none.
   */
  assertValid(name: string, result: CallResult): void;
}

export function httpToolHarness(
  options: {
    open?: () => Promise<{ engine: MemoryEngine; dir: string }>;
    fill?: (engine: MemoryEngine) => Promise<void>;
    serve?: (engine: MemoryEngine) => MemoryEngineApi;
    /** The project the server serves (SCOPE by default). */
    scope?: Scope;
    /** The repository the server checks freshness in, known once the hooks before this one ran. */
    repoRoot?: () => string;
  } = {},
): HttpToolHarness {
  let engine: MemoryEngine;
  let dir: string;
  let server: RunningHttpServer;
  let client: Client;
  let tools: Awaited<ReturnType<Client['listTools']>>['tools'] = [];
  before(async () => {
    ({ engine, dir } = await (options.open ?? openTestEngine)());
    await options.fill?.(engine);
    server = await startHttpServer({ engine: options.serve?.(engine) ?? engine, scope: options.scope ?? SCOPE, repoRoot: options.repoRoot?.() });
    client = await connectClient(server);
    tools = (await client.listTools()).tools;
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await engine?.close();
    if (dir) removeDir(dir);
  });
  return {
    get engine() {
      return engine;
    },
    get dir() {
      return dir;
    },
    get server() {
      return server;
    },
    get client() {
      return client;
    },
    async call(name, args, c = client) {
      return (await c.callTool({ name, arguments: args })) as CallResult;
    },
    assertValid(name, result) {
      const tool = tools.find((t) => t.name === name);
      assert.ok(tool, `no tool ${name}`);
      const schema = tool.outputSchema;
      if (!schema) {
        assert.equal(result.structuredContent, undefined, `${name} publishes no output schema, yet sends structuredContent`);
        return;
      }
      const check = new AjvJsonSchemaValidator().getValidator(schema as never)(result.structuredContent);
      assert.ok(check.valid, `${name}: ${check.errorMessage}`);
    },
  };
}
