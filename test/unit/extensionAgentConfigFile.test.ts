// Copy Agent Configuration → "Add to File" merges the server into the folder's .mcp.json (Claude
// Code) or .cursor/mcp.json (Cursor). A file it cannot merge into (comments, a list, an mcpServers
// that is not an object) is refused with a message naming it and left as it is: never rewritten
// without the server while the command says it was added, never stripped of its comments.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { mergeMcpJson } from '../../src/extension/agents/agentConfig';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

const SNIPPET = JSON.stringify({ mcpServers: { 'code-memory': { type: 'stdio', command: 'node' } } });

describe('extension: agent configuration added to an existing file', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  before(async () => {
    w = await openTwoProjectWindow();
  });
  after(() => w.close());

  /** Copy Agent Configuration for `target`, "Add to File", over a file holding `existing`: what it wrote and the errors shown. */
  async function addTo(target: 'claude' | 'cursor', existing: string): Promise<{ written: string | undefined; errors: string[] }> {
    let written: string | undefined;
    w.stub.workspace.fs = {
      stat: async () => ({}),
      readFile: async () => new TextEncoder().encode(existing),
      writeFile: async (_u: Any, bytes: Uint8Array) => void (written = new TextDecoder().decode(bytes)),
    };
    const c = { engines: w.engines, scopes: w.scopes, context: { extensionUri: w.stub.Uri.file('/ext') }, output: { error() {}, show() {} } };
    w.state.handlers.clear();
    withVscodeStub(w.stub, () => w.mods.registerCommands.registerCommands(c, { mcpRegistered: () => false }));
    w.state.active = w.editor(w.doc(path.join(w.dir, 'alpha', 'src', 'a.ts'), 'x'));
    const before = w.state.errors.length;
    await w.state.handlers.get('codeMemory.copyAgentConfiguration')!({ target, write: true });
    return { written, errors: w.state.errors.slice(before) };
  }

  it('merges into a file of other servers, keeping them', async () => {
    const r = await addTo('claude', '{"mcpServers":{"other":{"command":"x"}},"keep":1}');
    assert.deepEqual(r.errors, []);
    const merged = JSON.parse(r.written!);
    assert.deepEqual(Object.keys(merged.mcpServers).sort(), ['code-memory', 'other']);
    assert.equal(merged.keep, 1);
  });

  it('leaves a file with comments as it is, naming it and saying why', async () => {
    const r = await addTo('claude', '// my servers\n{"mcpServers":{"other":{"command":"x"}}}');
    assert.equal(r.written, undefined);
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0], /^Code Memory: \.mcp\.json is not plain JSON \(.*\); it was left as it is\. Add the configuration by hand: it is on the clipboard\.$/);
  });

  it('leaves a file holding a list, a string or null as it is (a list would be written back without the server)', async () => {
    for (const existing of ['[]', '[{"command":"x"}]', '"servers"', 'null']) {
      const r = await addTo('cursor', existing);
      assert.equal(r.written, undefined, existing);
      assert.deepEqual(r.errors, ['Code Memory: .cursor/mcp.json does not hold a JSON object; it was left as it is. Add the configuration by hand: it is on the clipboard.'], existing);
    }
  });

  it('leaves a file whose mcpServers is not an object as it is', () => {
    for (const servers of ['[]', '"x"', '3']) {
      assert.throws(() => mergeMcpJson(`{"mcpServers":${servers}}`, SNIPPET, '.mcp.json'), /^Error: \.mcp\.json has an "mcpServers" that is not an object; it was left as it is/, servers);
    }
    // An empty file, or one without mcpServers, takes the server.
    assert.ok(JSON.parse(mergeMcpJson('  \n', SNIPPET)).mcpServers['code-memory']);
    assert.ok(JSON.parse(mergeMcpJson('{"other":true}', SNIPPET)).mcpServers['code-memory']);
  });
});
