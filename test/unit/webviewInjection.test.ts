// Stored text (what an agent reported, what an import brought in) reaches the details and recall
// panels as HTML and the tree as markdown tooltips: it must show as text, never become an element,
// an attribute or an action, and the panels must not act on what a page posts beyond their links.
//
// Why a `vscode` stub: the page builders (observationBody, sessionBody, memoryBody, recallBody, page)
// are pure functions of records, and Navigation, SessionNode, MemoryNode and DetailsPanel's message
// handler use a handful of API members. The stub below supplies just those and records what would
// have been opened, warned or run; the host suites (test/host) exercise the real panels in a real
// VS Code. The produced pages are parsed and run in headless Chromium (playwright-core; the browser
// at CHROMIUM_PATH or /usr/bin/chromium, as test/host/hostLauncher.mjs) with the real
// media/webview.js, so the DOM, not a regex over the HTML, says what stored text became.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import type { SessionInfo } from '../../src/core/api';
import type { Memory, Observation, SessionSummary } from '../../src/core/model/records';
import type { RecallResult } from '../../src/extension/webviews/recallPanel';
import { MarkdownString, withVscodeStub } from './vscodeStub';

// ------------------------------------------------------------------------------ the vscode stub

/** What the extension asked VS Code to do. */
const calls = {
  opened: [] as string[],
  warnings: [] as string[],
  commands: [] as unknown[][],
  clipboard: [] as string[],
};
/** Paths the stubbed workspace.fs.stat finds. */
const existing = new Set<string>();

class Uri {
  constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  get fsPath(): string {
    return this.path;
  }
  with(change: { path?: string }): Uri {
    return new Uri(this.scheme, change.path ?? this.path);
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  /** As VS Code's: uri.with({ path: posix.join(uri.path, ...fragments) }). */
  static joinPath(uri: Uri, ...fragments: string[]): Uri {
    return uri.with({ path: path.posix.join(uri.path, ...fragments) });
  }
}

type Listener = (m: unknown) => unknown;
let panelListener: Listener | undefined;

const vscodeStub = {
  Uri,
  MarkdownString,
  TreeItem: class {
    constructor(
      public label: unknown,
      public collapsibleState?: number,
    ) {}
  },
  TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
  ThemeIcon: class {
    constructor(readonly id: string) {}
  },
  ThemeColor: class {
    constructor(readonly id: string) {}
  },
  Range: class {
    constructor(readonly line: number) {}
  },
  ViewColumn: { Active: -1, Beside: -2 },
  window: {
    showWarningMessage: async (m: string) => void calls.warnings.push(m),
    showTextDocument: async (u: Uri) => void calls.opened.push(u.fsPath),
    setStatusBarMessage: () => ({ dispose: () => undefined }),
    createWebviewPanel: () => ({
      webview: {
        html: '',
        cspSource: 'https://webview.test',
        asWebviewUri: (u: Uri) => `https://webview.test${u.path}`,
        onDidReceiveMessage: (listener: Listener) => {
          panelListener = listener;
          return { dispose: () => undefined };
        },
      },
      onDidDispose: () => ({ dispose: () => undefined }),
      reveal: () => undefined,
      dispose: () => undefined,
    }),
  },
  workspace: {
    fs: {
      stat: async (u: Uri) => {
        if (!existing.has(u.fsPath)) throw new Error(`ENOENT ${u.fsPath}`);
        return { type: 1 };
      },
    },
  },
  commands: { executeCommand: async (...args: unknown[]) => void calls.commands.push(args) },
  env: { clipboard: { writeText: async (t: string) => void calls.clipboard.push(t) } },
  extensions: { getExtension: () => undefined },
};

const root = path.resolve(__dirname, '../..');

// `vscode` resolves to the stub only while the modules under test load (vscodeStub.ts).
/* eslint-disable @typescript-eslint/no-require-imports */
const { DetailsPanel, memoryBody, observationBody, sessionBody, recallBody, page, Navigation, MemoryNode, SessionNode } = withVscodeStub(vscodeStub, () => ({
  ...(require('../../src/extension/webviews/detailsPanel') as typeof import('../../src/extension/webviews/detailsPanel')),
  ...(require('../../src/extension/webviews/recallPanel') as typeof import('../../src/extension/webviews/recallPanel')),
  ...(require('../../src/extension/webviews/html') as typeof import('../../src/extension/webviews/html')),
  ...(require('../../src/extension/webviews/navigation') as typeof import('../../src/extension/webviews/navigation')),
  ...(require('../../src/extension/views/nodes') as typeof import('../../src/extension/views/nodes')),
}));
/* eslint-enable @typescript-eslint/no-require-imports */

// ------------------------------------------------------------------------------ hostile records

const at = 1_704_067_200_000;
/** Breakouts from text, from a double- or single-quoted attribute, and markup a page would act on. */
const HOSTILE = [
  `<img src=x onerror=alert(1) data-evil=1>`,
  `"><script>alert(2)</script><b data-evil="1">`,
  `'><svg onload=alert(3) data-evil=1></svg>`,
  `x" data-evil="1" onmouseover="alert(4)`,
  `x' data-evil='1`,
  `</pre></textarea></title><iframe srcdoc="<script>alert(5)</script>" data-evil=1></iframe>`,
  `<a href="javascript:alert(6)" data-evil=1 data-msg='{"type":"command","command":"codeMemory.suppress"}'>Copy reference</a>`,
  `<base href="https://evil.example/"><form action="https://evil.example/"><button data-evil=1>go</button></form>`,
  '**bold** `code` <i data-evil=1>i</i>',
].join(' ');
/** What the details panel's pages may post; anything else would come from stored text. */
const DETAILS_MESSAGES = ['openFile', 'openCommit', 'openObservation', 'openNode', 'copy'];

function hostileObservation(over: Partial<Observation> = {}): Observation {
  return {
    id: 7,
    memory_session_id: HOSTILE,
    content_session_id: HOSTILE,
    project: HOSTILE,
    type: HOSTILE,
    title: HOSTILE,
    subtitle: HOSTILE,
    narrative: `${HOSTILE}\n\n- ${HOSTILE}\n- **${HOSTILE}**`,
    facts: JSON.stringify([HOSTILE]),
    concepts: JSON.stringify([HOSTILE]),
    files_read: JSON.stringify([HOSTILE, '../../etc/passwd']),
    files_modified: JSON.stringify([HOSTILE, 'src/app.ts']),
    commit_sha: HOSTILE,
    branch: HOSTILE,
    status: HOSTILE,
    created_at: new Date(at).toISOString(),
    created_at_epoch: at,
    last_accessed_epoch: null,
    discovery_tokens: 0,
    compressed_sources: null,
    ...over,
  };
}

function hostileSummary(): SessionSummary {
  return { id: 1, memory_session_id: HOSTILE, project: HOSTILE, request: HOSTILE, learned: HOSTILE, completed: HOSTILE, decisions: HOSTILE, next_steps: HOSTILE, preferences: HOSTILE, created_at: '', created_at_epoch: at };
}

function hostileSession(id = HOSTILE): SessionInfo {
  return { memory_session_id: id, project: HOSTILE, branch: HOSTILE, started_at_epoch: at, ended_at_epoch: at + 60_000, observation_count: 1, summary: hostileSummary() };
}

/** A memory whose JSON columns hold what an import could have stored before import checked them. */
function hostileMemory(): Memory {
  return {
    id: 3,
    project: HOSTILE,
    title: HOSTILE,
    text: HOSTILE,
    memory_type: HOSTILE,
    created_at_epoch: at,
    updated_at_epoch: at,
    status: HOSTILE,
    scope: 'project',
    classification: HOSTILE,
    classification_reason: HOSTILE,
    current_context_eligible: true,
    branch: HOSTILE,
    files: JSON.stringify([HOSTILE]),
    session_id: HOSTILE,
    topic_key: HOSTILE,
    topic_trace: [{ id: 1, topic_key: HOSTILE, title: HOSTILE, summary: HOSTILE, status: HOSTILE, segment_index: 0, covered_from_event_id: 1, covered_to_event_id: 2, evidence_event_ids: [], files: null, created_at_epoch: at, updated_at_epoch: at }],
    temporal_facts: [{ project: HOSTILE, subject: HOSTILE, predicate: HOSTILE, object: HOSTILE, learned_at_epoch: at, confidence: 1, status: HOSTILE, valid_from_epoch: at, valid_to_epoch: null }],
    supersedes: [HOSTILE, 2] as unknown as number[],
    superseded_by: 9,
    valid_to_epoch: at,
    conflicts: [
      { id: HOSTILE as unknown as number, reason: HOSTILE, detected_at_epoch: at, resolution: 'open', resolved_at_epoch: null },
      { id: 4, reason: HOSTILE, detected_at_epoch: at, resolution: HOSTILE as 'open', resolved_at_epoch: at },
    ],
  };
}

function hostileRecall(): RecallResult {
  const cell = { node_id: HOSTILE, layer: 'L0', source_kind: 'observation', source_id: 1, project: HOSTILE, branch: HOSTILE, type: HOSTILE, title: HOSTILE, text: HOSTILE, files: JSON.stringify([HOSTILE]), commit_sha: HOSTILE, session_id: HOSTILE, created_at_epoch: at, last_accessed_epoch: null, access_count: 0, status: 'active' };
  return { query: HOSTILE, origin: HOSTILE, scope: { project: HOSTILE }, elapsedMs: 1, contextPack: HOSTILE, hits: [{ cell, score: 0.5, distance: 0.5 }] } as unknown as RecallResult;
}

// ------------------------------------------------------------------------------ Chromium

const ORIGIN = 'https://webview.test';
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

interface PageReport {
  /** Elements or attributes that can only come from stored text. */
  injected: string[];
  /** The type of every data-msg on the page, and of every message webview.js posted when each was clicked. */
  messageTypes: string[];
  postedTypes: string[];
  /** Whether the hostile text shows, as text. */
  textShown: boolean;
  csp: string;
  cspMetas: number;
  scripts: { src: string; nonce: string }[];
  dialogs: string[];
}

// Runs in the page; a string, so that no transform of the test's TypeScript reaches the browser.
const INSPECT = `(() => {
  const injected = [];
  const forbidden = ['img', 'iframe', 'object', 'embed', 'form', 'button', 'input', 'textarea', 'base', 'b', 'i', 'video', 'audio', 'style'];
  for (const el of document.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (forbidden.includes(tag)) injected.push('<' + tag + '>');
    for (const a of el.getAttributeNames()) {
      if (/^on/i.test(a) || ['data-evil', 'srcdoc', 'formaction', 'action'].includes(a)) injected.push(tag + '[' + a + ']');
    }
    const href = el.getAttribute('href');
    if (tag === 'a' && href !== null && href !== '#') injected.push('a[href=' + href + ']');
  }
  // The one script of the page is webview.js, at the end of the body; an svg's <title> is its tooltip.
  for (const el of document.querySelectorAll('body meta, body link, body script:not([src$="/ext/media/webview.js"]), body title:not(svg title)')) injected.push('<' + el.tagName.toLowerCase() + '> in body');
  const messageTypes = [...document.querySelectorAll('[data-msg]')].map((el) => {
    try { return String(JSON.parse(el.getAttribute('data-msg')).type); } catch { return 'malformed'; }
  });
  window.__posted.length = 0;
  for (const el of document.querySelectorAll('[data-msg]')) el.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
  const postedTypes = window.__posted.map((m) => String(m && m.type));
  const metas = document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]');
  return {
    injected,
    messageTypes,
    postedTypes,
    textShown: document.body.textContent.includes('data-evil=1') && document.body.textContent.includes('<img src=x onerror'),
    csp: metas.length ? metas[0].getAttribute('content') : '',
    cspMetas: metas.length,
    scripts: [...document.scripts].map((s) => ({ src: s.src, nonce: s.nonce })),
  };
})()`;

/** page(body) as the panels build it, loaded at a webview-like origin with the real webview.js and css. */
async function inspect(context: BrowserContext, body: string): Promise<PageReport> {
  const webview = { cspSource: ORIGIN, asWebviewUri: (u: Uri) => `${ORIGIN}${u.path}` };
  const html = page(webview as never, Uri.file('/ext') as never, 'Code Memory', body);
  const p = await context.newPage();
  const dialogs: string[] = [];
  p.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  try {
    await p.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.origin !== ORIGIN) return route.abort();
      if (url.pathname === '/index.html') return route.fulfill({ contentType: 'text/html', body: html });
      if (url.pathname.startsWith('/ext/media/')) {
        const file = path.join(root, 'media', path.basename(url.pathname));
        if (fs.existsSync(file)) return route.fulfill({ contentType: file.endsWith('.js') ? 'text/javascript' : 'text/css', body: fs.readFileSync(file, 'utf8') });
      }
      return route.fulfill({ status: 404, body: '' });
    });
    await p.goto(`${ORIGIN}/index.html`, { waitUntil: 'load' });
    const report = (await p.evaluate(INSPECT)) as Omit<PageReport, 'dialogs'>;
    return { ...report, dialogs };
  } finally {
    await p.close();
  }
}

/** The checks every page must pass; each line names what failed. */
function problemsOf(r: PageReport, allowedMessages: string[]): string[] {
  const problems: string[] = [];
  if (r.injected.length > 0) problems.push(`stored text became markup: ${[...new Set(r.injected)].join(', ')}`);
  const foreign = r.messageTypes.filter((t) => !allowedMessages.includes(t));
  if (foreign.length > 0) problems.push(`data-msg of type ${[...new Set(foreign)].join(', ')} on the page`);
  if (r.postedTypes.length !== r.messageTypes.length) problems.push(`webview.js posted ${r.postedTypes.length} messages for ${r.messageTypes.length} links (did it run?)`);
  const foreignPosted = r.postedTypes.filter((t) => !allowedMessages.includes(t));
  if (foreignPosted.length > 0) problems.push(`a click posted ${[...new Set(foreignPosted)].join(', ')}`);
  if (!r.textShown) problems.push('the hostile text is not shown as text');
  if (r.dialogs.length > 0) problems.push(`a script ran: ${r.dialogs.join(', ')}`);
  return problems;
}

function cspDirectives(csp: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name.toLowerCase(), values);
  }
  return map;
}

describe('webviews: stored text stays text in the panels (headless Chromium, real webview.js)', function () {
  this.timeout(120_000);
  let browser: Browser | undefined;
  let context: BrowserContext;

  before(async function () {
    if (!fs.existsSync(chromiumPath)) {
      throw new Error(`Chromium not found at ${chromiumPath}: these checks parse the panels' pages in a browser. Install the Debian package \`chromium\` or set CHROMIUM_PATH.`);
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'] });
    context = await browser.newContext({ javaScriptEnabled: true });
    await context.addInitScript({ content: 'window.__posted = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__posted.push(m) });' });
  });

  after(async () => {
    await browser?.close();
  });

  it('observation: every stored field, the type (a class name) included, shows as text', async () => {
    const o = hostileObservation();
    const r = await inspect(context, observationBody({ project: HOSTILE }, o, [o, hostileObservation({ id: 8, type: 'edit' })]));
    assert.deepEqual(problemsOf(r, DETAILS_MESSAGES), []);
  });

  it('session: summary, branch, session ids and the observations listed (their types included) show as text', async () => {
    const s = hostileSession();
    const r = await inspect(context, sessionBody({ project: HOSTILE }, s, [hostileObservation(), hostileObservation({ id: 8, type: 'edit' })], [s, hostileSession('other')]));
    assert.deepEqual(problemsOf(r, DETAILS_MESSAGES), []);
  });

  it('memory: supersedes and conflict ids (imported JSON columns) render as numbers, reasons and every other field as text', async () => {
    const r = await inspect(context, memoryBody({ project: HOSTILE }, hostileMemory()));
    assert.deepEqual(problemsOf(r, DETAILS_MESSAGES), []);
  });

  it('recall: query, origin and every field of a hit show as text', async () => {
    const r = await inspect(context, recallBody(hostileRecall()));
    assert.deepEqual(problemsOf(r, ['openNode', 'openFile', 'openCommit', 'copy']), []);
  });

  it('the page: one CSP, scripts by nonce only, no unsafe-*, base-uri and form-action none; a fresh nonce per page', async () => {
    const a = await inspect(context, observationBody({ project: 'p' }, hostileObservation(), []));
    const b = await inspect(context, '<p>x</p>');
    const problems: string[] = [];
    for (const r of [a, b]) {
      const d = cspDirectives(r.csp);
      if (r.cspMetas !== 1) problems.push(`${r.cspMetas} CSP meta elements`);
      if (/unsafe-(inline|eval|hashes)/.test(r.csp)) problems.push(`unsafe source in ${r.csp}`);
      if (d.get('default-src')?.join(' ') !== "'none'") problems.push(`default-src ${d.get('default-src')}`);
      if (d.get('base-uri')?.join(' ') !== "'none'") problems.push(`base-uri ${d.get('base-uri')}`);
      if (d.get('form-action')?.join(' ') !== "'none'") problems.push(`form-action ${d.get('form-action')}`);
      if (r.scripts.length !== 1 || !r.scripts[0].src.endsWith('/ext/media/webview.js')) problems.push(`scripts ${JSON.stringify(r.scripts)}`);
      else if (d.get('script-src')?.join(' ') !== `'nonce-${r.scripts[0].nonce}'` || !r.scripts[0].nonce) problems.push(`script-src ${d.get('script-src')} for nonce ${r.scripts[0].nonce}`);
    }
    if (a.scripts[0]?.nonce === b.scripts[0]?.nonce) problems.push('the same nonce on two pages');
    assert.deepEqual(problems, [], a.csp);
  });
});

describe('webviews: memoryBody and JSON columns of the wrong shape', () => {
  it('renders (escaped) where temporal_facts, conflicts or topic_trace hold numbers, objects, lists or null', () => {
    const base = hostileMemory();
    const cases: Partial<Record<keyof Memory, unknown>>[] = [
      { temporal_facts: [{ subject: 1, predicate: null, object: { a: 1 }, valid_from_epoch: null, valid_to_epoch: null }] },
      { temporal_facts: [{ subject: ['<img src=x onerror=alert(1)>'], predicate: 'p', object: 'o', valid_from_epoch: null, valid_to_epoch: null }] },
      { conflicts: [{ id: 4, reason: 5, resolution: 5, resolved_at_epoch: null }] },
      { conflicts: [{ id: 4, reason: null, resolution: null, resolved_at_epoch: null }] },
      { topic_trace: [{ title: null, summary: {}, status: 1 }] },
      { supersedes: [{ id: 1 }, null] },
    ];
    const failures: string[] = [];
    for (const extra of cases) {
      const label = JSON.stringify(extra);
      try {
        const html = memoryBody({ project: 'p' }, { ...base, supersedes: null, conflicts: null, temporal_facts: null, topic_trace: null, ...extra } as Memory);
        if (/<img/i.test(html)) failures.push(`${label}: <img> in the page`);
      } catch (e) {
        failures.push(`${label}: ${(e as Error).message}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});

describe('webviews: what a click can open or run', () => {
  const folder = { uri: Uri.file('/ws/proj'), name: 'proj', index: 0 };
  const scopes = { all: async () => [{ scope: { project: 'p' }, folder }], currentFolder: () => folder };
  const navigation = new Navigation(scopes as never);

  beforeEach(() => {
    calls.opened.length = 0;
    calls.warnings.length = 0;
    calls.commands.length = 0;
    calls.clipboard.length = 0;
    existing.clear();
    // Files that exist outside the workspace folder, as on any machine, and one inside it.
    for (const p of ['/ws/proj/src/app.ts', '/etc/passwd', '/ws/proj-secrets/key', '/ws/other/notes.md']) existing.add(p);
  });

  it('openFile opens a path inside the workspace folder', async () => {
    await navigation.openFile('src/app.ts', 'p', 3);
    assert.deepEqual(calls.opened, ['/ws/proj/src/app.ts']);
    assert.deepEqual(calls.warnings, []);
  });

  for (const stored of ['../../etc/passwd', 'src/../../../etc/passwd', '../proj-secrets/key', '../other/notes.md', '/../../etc/passwd']) {
    it(`openFile refuses ${stored} (outside the folder) with a warning`, async () => {
      await navigation.openFile(stored, 'p');
      assert.deepEqual(calls.opened, []);
      assert.equal(calls.warnings.length, 1, JSON.stringify(calls.warnings));
      assert.match(calls.warnings[0], /outside proj: not opened/);
    });
  }

  it('openFile of an absolute path opens nothing and warns (it is read inside the folder, where it does not exist)', async () => {
    await navigation.openFile('/etc/passwd', 'p');
    assert.deepEqual(calls.opened, []);
    assert.equal(calls.warnings.length, 1, JSON.stringify(calls.warnings));
  });

  it('openCommit of an id that is an option of git (`--output=…`) runs no git and warns', async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-opencommit-'));
    try {
      execFileSync('git', ['init', '-q', repo]);
      execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'first']);
      const inRepo = new Navigation({ all: async () => [{ scope: { project: 'p' }, folder: { uri: Uri.file(repo), name: 'repo', index: 0 } }] } as never);
      const written = path.join(repo, 'written-by-git');
      await inRepo.openCommit(`--output=${written}`, 'p');
      assert.equal(fs.existsSync(written), false, 'git show wrote the file the id named');
      assert.equal(calls.warnings.length, 1, JSON.stringify(calls.warnings));
      assert.match(calls.warnings[0], /Not a commit id/);
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  it("the details panel runs no command a page posts, and still handles its own links", async () => {
    const engines = { get: async () => Promise.reject(new Error('no engine in this test')) };
    const panel = new DetailsPanel(Uri.file('/ext') as never, engines as never, navigation, {} as never);
    panelListener = undefined;
    await panel.show({ kind: 'memory', scope: { project: 'p' }, id: 1 });
    const listener = panelListener as Listener | undefined;
    assert.ok(listener, 'the panel registered no message handler');
    await listener({ type: 'command', command: 'codeMemory.suppress' });
    await listener({ type: 'command', command: 'codeMemory.pauseCapture' });
    assert.deepEqual(calls.commands, [], 'a posted command ran');
    await listener({ type: 'openFile', path: '../../etc/passwd', project: 'p' });
    assert.deepEqual(calls.opened, [], 'a posted path outside the folder was opened');
    // The handler is reached and works for what the pages offer.
    await listener({ type: 'copy', text: 'memory:1' });
    await listener({ type: 'openFile', path: 'src/app.ts', project: 'p' });
    assert.deepEqual({ clipboard: calls.clipboard, opened: calls.opened }, { clipboard: ['memory:1'], opened: ['/ws/proj/src/app.ts'] });
    panel.dispose();
  });
});

describe('tree tooltips: stored text is not markdown', () => {
  /** The tooltip with every backslash-escaped character removed: what is left is live markdown. */
  const live = (md: MarkdownString): string => md.value.replace(/\\[\s\S]/g, '');
  /** The tooltip as the text a reader sees (escapes and &nbsp; undone). */
  const shown = (md: MarkdownString): string => md.value.replace(/\\([\s\S])/g, '$1').replace(/&nbsp;/g, ' ');

  it('SessionNode: no link or image from the summary, branch or session id; the text still shows', () => {
    const link = '![t](https://evil.example/pixel.png) [Fix](https://evil.example/phish) [cmd](command:workbench.action.terminal.new) <img src=x>';
    const s: SessionInfo = {
      memory_session_id: `s1\` ${link} \``,
      project: 'p',
      branch: `main\` [x](https://evil.example/b) \``,
      started_at_epoch: at,
      ended_at_epoch: at + 1,
      observation_count: 1,
      summary: { ...hostileSummary(), request: link, completed: `done ${link}` },
    };
    const md = new SessionNode({ project: 'p' }, s).tooltip as unknown as MarkdownString;
    assert.ok(!md.isTrusted && !md.supportHtml, 'the tooltip is trusted or renders HTML');
    // appendText leaves < as is (VS Code does): the tooltip does not render HTML (supportHtml is false).
    assert.doesNotMatch(live(md), /\]\(|!\[/, md.value);
    assert.ok(shown(md).includes('[Fix](https://evil.example/phish)') && shown(md).includes('branch main` [x]'), md.value);
  });

  it('MemoryNode: no HTML or strikethrough from the title', () => {
    const m = { ...hostileMemory(), title: '<img src=x onerror=alert(1)> ~~gone~~ [x](https://evil.example)', text: '![t](https://evil.example/p.png)', memory_type: 'decision', status: 'active', superseded_by: null };
    const md = new MemoryNode({ project: 'p' }, m).tooltip as unknown as MarkdownString;
    assert.ok(!md.isTrusted && !md.supportHtml, 'the tooltip is trusted or renders HTML');
    assert.doesNotMatch(live(md), /\]\(|!\[|<|~/, md.value);
  });
});
