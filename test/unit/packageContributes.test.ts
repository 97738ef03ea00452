// package.json's contributes against the code it describes: VS Code validates a chat's call of a
// language-model tool against the schema in package.json, and shows the settings' defaults and
// types from it, so each must say what the product's own code says.
import * as assert from 'node:assert/strict';
import { DEFAULT_EXCLUDES } from '../../src/extension/capture/excludes';
import { httpToolHarness } from './httpToolHarness';

interface Contributes {
  languageModelTools: Array<{ name: string; inputSchema: Record<string, unknown> }>;
  configuration: { properties: Record<string, { type?: string; default?: unknown; minimum?: number; maximum?: number }> };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const contributes = (require('../../package.json') as { contributes: Contributes }).contributes;

describe('package.json contributes', function () {
  this.timeout(120_000);
  const h = httpToolHarness();

  it('each language-model tool publishes the input schema of the MCP tool of its name (README: "with the same input schemas")', async () => {
    const tools = (await h.client.listTools()).tools;
    assert.ok(contributes.languageModelTools.length > 0);
    for (const lm of contributes.languageModelTools) {
      const name = lm.name.replace(/^codeMemory_/, '');
      const mcp = tools.find((t) => t.name === name);
      assert.ok(mcp, `${lm.name}: no MCP tool ${name}`);
      const { $schema: _ignored, ...published } = mcp.inputSchema as Record<string, unknown>;
      assert.deepStrictEqual(lm.inputSchema, published, `${lm.name}: package.json's inputSchema differs from tools/list's; copy the MCP one`);
    }
  });

  it('the default of codeMemory.capture.exclude is the list the extension falls back to', () => {
    assert.deepEqual(contributes.configuration.properties['codeMemory.capture.exclude'].default, DEFAULT_EXCLUDES);
  });

  it('codeMemory.server.port takes whole numbers only', () => {
    const port = contributes.configuration.properties['codeMemory.server.port'];
    assert.deepEqual([port.type, port.minimum, port.maximum], ['integer', 0, 65535]);
  });
});
