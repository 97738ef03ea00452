// A panel's page posts messages (open this observation, this reference, this file, this commit).
// Markup a stored record smuggled into the page could post one naming any project: the host opens
// what a message names in the scope of what the panel shows (its project and branch), so another
// project's records never reach this window's panels.
import { strict as assert } from 'node:assert';
import type { Scope } from '../../src/core/model/records';
import { withVscodeStub } from './vscodeStub';
import type { Any, TwoProjectWindow } from './extensionWindow';
import { openTwoProjectWindow } from './extensionWindow';

type Listener = (m: unknown) => Promise<void>;
const DETAILS = 'codeMemory.details';
const RECALL = 'codeMemory.recall';

describe('panel messages open what they name in the panel scope, never a project the page names', function () {
  this.timeout(60_000);
  let w: TwoProjectWindow;
  /** Each panel's listener to its page, by view type. */
  const listeners = new Map<string, Listener>();
  const post = (viewType: string, m: unknown): Promise<void> => {
    const listener = listeners.get(viewType);
    assert.ok(listener, `control: the ${viewType} panel listens to its page`);
    return listener(m);
  };
  let details: Any;
  let recall: Any;
  const opened: Array<{ what: string; project: string | undefined }> = [];
  const gamma: Scope = { project: 'proj-gamma-not-in-window' };

  before(async () => {
    w = await openTwoProjectWindow();
    const create = w.stub.window.createWebviewPanel;
    w.stub.window.createWebviewPanel = (viewType: string, ...args: unknown[]) => {
      const panel = create(viewType, ...args);
      panel.webview.onDidReceiveMessage = (l: Listener) => {
        listeners.set(viewType, l);
        return { dispose() {} };
      };
      return panel;
    };
    const navigation = {
      openFile: async (file: string, project?: string) => void opened.push({ what: `file ${file}`, project }),
      openCommit: async (sha: string, project?: string) => void opened.push({ what: `commit ${sha}`, project }),
    };
    withVscodeStub(w.stub, () => {
      details = new w.mods.details.DetailsPanel(w.stub.Uri.file(w.dir), w.engines, navigation, { check: async () => null });
      recall = new w.mods.recall.RecallPanel(w.stub.Uri.file(w.dir), w.engines, details, navigation);
    });
  });
  after(async () => w?.close());

  const html = (): string => w.state.panels.map((p: Any) => p.webview.html as string).join('\n');

  it('the details panel: an observation or reference of another project, named by a message, is not shown; one of its own project is', async () => {
    const [secret] = await w.engine.observe([{ type: 'note', title: 'gamma QUUXMARKER title', narrative: 'gamma QUUXMARKER narrative' }], gamma);
    const [own] = await w.engine.observe([{ type: 'note', title: 'alpha OWNMARKER title', narrative: 'alpha narrative' }], w.alpha);
    await w.engine.flush();
    const [node] = await w.engine.search('QUUXMARKER', { scope: gamma, limit: 3 });
    assert.ok(node, 'control: the other project has the reference');
    const memory = await w.engine.remember({ title: 'alpha memory', text: 'alpha only' }, w.alpha);
    await details.show({ kind: 'memory', scope: w.alpha, id: memory.id });
    await post(DETAILS, { type: 'openObservation', project: gamma.project, id: secret.id });
    assert.doesNotMatch(html(), /QUUXMARKER/);
    await post(DETAILS, { type: 'openNode', project: gamma.project, nodeId: node.cell.node_id });
    assert.doesNotMatch(html(), /QUUXMARKER/);
    await post(DETAILS, { type: 'openObservation', project: gamma.project, id: own.id });
    assert.match(html(), /OWNMARKER/, 'control: a link to a record of the project shown opens it');
  });

  it('the recall panel: an observation of another project, named by a message, is not shown', async () => {
    const [secret] = await w.engine.observe([{ type: 'note', title: 'gamma FLARNMARKER', narrative: 'FLARNMARKER body' }], gamma);
    await w.engine.flush();
    recall.show({ query: 'anything', scope: w.alpha, hits: [] });
    await post(RECALL, { type: 'openObservation', project: gamma.project, id: secret.id });
    assert.doesNotMatch(html(), /FLARNMARKER/);
  });

  it('files and commits open in the project of what the panel shows, whatever project the message names', async () => {
    opened.length = 0;
    const memory = await w.engine.remember({ title: 'beta memory', text: 'beta only', files: ['src/b.ts'] }, w.beta);
    await details.show({ kind: 'memory', scope: w.beta, id: memory.id });
    await post(DETAILS, { type: 'openFile', path: 'src/b.ts', project: gamma.project });
    await post(DETAILS, { type: 'openCommit', sha: 'abc1234', project: gamma.project });
    await post(RECALL, { type: 'openFile', path: 'src/a.ts', project: gamma.project });
    assert.deepEqual(opened, [
      { what: 'file src/b.ts', project: w.beta.project },
      { what: 'commit abc1234', project: w.beta.project },
      { what: 'file src/a.ts', project: w.alpha.project },
    ]);
  });
});
