// Cross-project probes: two projects, alpha and beta, share one store. alpha stores
// observations, memories, a session summary and prompts; beta's clients (MCP over HTTP and over
// stdio, the REST routes, the CLI) then try every handle on alpha's data: session ids, node ids,
// record ids, filters, text, the request log, the health counts, writes naming alpha, and a
// session end that could pull beta's rows into alpha's summary. Every response beta gets is
// scanned for alpha's canary words, prompts, session ids, node ids and record ids: zero leaks.

import * as assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { MemoryEngine } from '../../src/core/engine';
import type { Observation, Scope } from '../../src/core/model/records';
import { sqlString } from '../../src/core/store/filters';
import { TABLES } from '../../src/core/store/schema';
import type { TableName } from '../../src/core/store/schema';
import { startHttpServer } from '../../src/mcp/httpServer';
import { accountSessionId } from '../../src/mcp/mcpServer';
import type { RunningHttpServer } from '../../src/mcp/httpServer';
import { Secrets, everything, httpSide, rawToolCall, rest, runCli, stdioSide } from './crossProjectFixture';
import type { CallResult, Side } from './crossProjectFixture';
import { openTestEngine, removeDir, tempDir } from './mcpFixture';

const ALPHA = 'alpha';
const BETA = 'beta';
const alphaScope: Scope = { project: ALPHA };
const betaScope: Scope = { project: BETA };

const ALPHA_SHA = 'a1fa0c0ffee5eed1a1fa0c0ffee5eed1a1fa0c0f';
const ALPHA_WORDS = ['zorblaxquint', 'flimwobble', 'quoffelmorph', 'snarfidex', 'plonkvertu', 'gribbleshank', 'wuzzlecrant', 'drimblepox', 'yaffleton', 'mornaflux', 'pentravoke', 'ozzleprank', ALPHA_SHA];
const BETA_WORDS = ['vantrelliq', 'mobbleguff', 'trinquashy', 'beezlefrump', 'kronkwallet', 'splendorix', 'chuffnagle'];
const ALPHA_FILE = 'src/zorblaxquint/scheduler.ts';
const ALPHA_TYPE = 'zorblaxquint-audit';
/** A file both projects have: alpha's edits of it and beta's could make one merge group. */
const SHARED_FILE = 'src/shared/index.ts';
const FOLLOW_UP = 'and why was that?';
const TRANSPORTS = ['http', 'stdio'] as const;
type Transport = (typeof TRANSPORTS)[number];

function rewritten(result: CallResult): string {
  return String((result.structuredContent?.triage as { rewritten_query?: string } | undefined)?.rewritten_query ?? '');
}

function nodeIdsOf(result: CallResult): string[] {
  return ((result.structuredContent as { nodes?: Array<{ node_id: string }> } | undefined)?.nodes ?? []).map((n) => n.node_id);
}

function structured<T>(result: CallResult): T {
  assert.equal(result.isError, false, result.content[0]?.text);
  return result.structuredContent as T;
}

/** Collects every leak of one `it`, so that a failure lists all the handles that leaked at once. */
class LeakLog {
  private readonly found: string[] = [];
  constructor(private readonly owner: Secrets) {}
  check(label: string, response: unknown, given: unknown = null): void {
    const leaks = this.owner.leaksIn(typeof response === 'string' ? response : response && typeof response === 'object' && 'content' in response ? everything(response as CallResult) : response, given);
    if (leaks.length > 0) this.found.push(`${label} -> ${leaks.join(', ')}`);
  }
  assertNone(): void {
    assert.deepEqual(this.found, [], `${this.owner.project}'s data reached the other project in ${this.found.length} response(s)`);
  }
}

describe('cross-project isolation: two projects on one store', function () {
  this.timeout(120_000);
  let engine: MemoryEngine;
  let store: string;
  let alphaHttp: RunningHttpServer;
  let betaHttp: RunningHttpServer;
  const sides = {} as Record<Transport, { alpha: Side; beta: Side }>;
  let alpha: Secrets;
  let beta: Secrets;
  /** alpha's first session (ended, summarised), its open HTTP session and its stdio session. */
  let firstSession: string;
  let openSession: string;
  let stdioSession: string;
  let suppressedIds: { observation: number; memory: number };
  const cleanup: string[] = [];

  async function alphaAsks(side: Side, prompt: string, sessionId?: string): Promise<CallResult> {
    alpha.prompts.add(prompt);
    const result = await side.call('retrieve_memory', sessionId === undefined ? { prompt } : { prompt, session_id: sessionId });
    assert.equal(result.structuredContent?.status, 'ok', result.content[0]?.text);
    return result;
  }

  async function observe(side: Side, observations: Array<Record<string, unknown>>): Promise<number[]> {
    return structured<{ ids: number[] }>(await side.call('observe', { observations })).ids;
  }

  async function rows(table: TableName, where: string): Promise<Array<Record<string, unknown>>> {
    return engine.store.rows(table, where);
  }

  before(async () => {
    store = tempDir('xproject-store');
    cleanup.push(store);
    ({ engine } = await openTestEngine(store));
    alphaHttp = await startHttpServer({ engine, scope: alphaScope });
    betaHttp = await startHttpServer({ engine, scope: betaScope });
    const [aStdio, bStdio, aHttp, bHttp] = await Promise.all([stdioSide(ALPHA, store), stdioSide(BETA, store), httpSide(ALPHA, alphaHttp), httpSide(BETA, betaHttp)]);
    sides.http = { alpha: aHttp, beta: bHttp };
    sides.stdio = { alpha: aStdio, beta: bStdio };

    // alpha's first session: observations over MCP and REST, memories, then its end (a summary).
    const first = await observe(aHttp, [
      { type: 'decision', title: 'Zorblaxquint scheduler replaced the flimwobble queue', narrative: 'We decided to use the zorblaxquint scheduler instead of the flimwobble queue because quoffelmorph jobs starved.', files_modified: [ALPHA_FILE], commit_sha: ALPHA_SHA, branch: 'main' },
      { type: ALPHA_TYPE, title: 'Snarfidex audit of the zorblaxquint cache', narrative: 'The plonkvertu cache of zorblaxquint evicts snarfidex entries after an hour.', files_read: ['src/zorblaxquint/cache.ts'] },
      { type: 'note', title: 'Gribbleshank warning for zorblaxquint', narrative: 'Wuzzlecrant retries must stay below five in zorblaxquint.' },
    ]);
    const posted = await rest(alphaHttp, '/v1/observations', { method: 'POST', body: { type: 'note', title: 'Drimblepox hook posted to zorblaxquint', narrative: 'A yaffleton hook posted this through the REST route of zorblaxquint.' } });
    assert.equal(posted.status, 201, posted.body);
    structured(await aHttp.call('remember', { title: 'Decision: zorblaxquint owns drimblepox retries', text: 'The team decided that zorblaxquint owns every drimblepox retry; yaffleton must not retry.', memory_type: 'decision', files: [ALPHA_FILE] }));
    const hidden = structured<{ id: number }>(await aHttp.call('remember', { title: 'Ozzleprank note of zorblaxquint', text: 'Ozzleprank flags are read once per zorblaxquint start.' })).id;
    firstSession = (await engine.getObservations([first[0]], alphaScope))[0].memory_session_id;
    assert.ok(await engine.endSession(alphaScope, firstSession, 'idle'), 'alpha has a session summary');
    await engine.setStatus('observation', first[2], 'suppressed', alphaScope);
    await engine.setStatus('memory', hidden, 'suppressed', alphaScope);
    suppressedIds = { observation: first[2], memory: hidden };

    // alpha's open sessions: two edits of the shared file over HTTP, two over stdio.
    const open = await observe(aHttp, [
      { type: 'edit', title: 'Mornaflux hook added to the shared index', narrative: 'zorblaxquint registers its mornaflux hook in the shared index.', files_modified: [SHARED_FILE] },
      { type: 'edit', title: 'Pentravoke export tidied in the shared index', narrative: 'zorblaxquint exports pentravoke from the shared index.', files_modified: [SHARED_FILE] },
    ]);
    openSession = (await engine.getObservations([open[0]], alphaScope))[0].memory_session_id;
    const viaStdio = await observe(aStdio, [
      { type: 'edit', title: 'Quoffelmorph import added to the shared index', narrative: 'zorblaxquint imports quoffelmorph in the shared index.', files_modified: [SHARED_FILE] },
      { type: 'edit', title: 'Snarfidex guard moved into the shared index', narrative: 'zorblaxquint guards snarfidex in the shared index.', files_modified: [SHARED_FILE] },
    ]);
    structured(await aStdio.call('remember', { title: 'Convention: zorblaxquint logs through plonkvertu', text: 'Always log zorblaxquint events through plonkvertu.', memory_type: 'convention' }));
    stdioSession = (await engine.getObservations([viaStdio[0]], alphaScope))[0].memory_session_id;
    assert.notEqual(stdioSession, openSession);

    // beta's own data, so that beta's tools have something of their own to answer with.
    await observe(bHttp, [{ type: 'edit', title: 'Vantrelliq parser reads mobbleguff files', narrative: 'The vantrelliq parser reads mobbleguff files with trinquashy escapes.', files_modified: ['src/vantrelliq/parser.ts'] }]);
    await observe(bStdio, [{ type: 'note', title: 'Beezlefrump note on vantrelliq', narrative: 'Kronkwallet limits apply to every vantrelliq import.' }]);
    structured(await bHttp.call('remember', { title: 'Decision: vantrelliq keeps splendorix', text: 'We decided vantrelliq keeps splendorix for chuffnagle files.', memory_type: 'decision' }));

    alpha = new Secrets(ALPHA, ALPHA_WORDS, engine);
    // beta's rows are handed alpha's session ids on purpose below: those stay alpha's.
    beta = new Secrets(BETA, BETA_WORDS, engine, alpha.sessions);
    alpha.sessions.add((aHttp.client.transport as StreamableHTTPClientTransport).sessionId!);
    await alpha.refresh();
    await beta.refresh();
  });

  after(async () => {
    for (const s of Object.values(sides)) {
      await s.alpha?.client.close();
      await s.beta?.client.close();
    }
    await alphaHttp?.close();
    await betaHttp?.close();
    await engine?.close();
    for (const dir of cleanup) removeDir(dir);
  });

  it('the baseline: each project reads its own records through each transport', async () => {
    assert.deepEqual([alpha.ids('observation').length >= 8, alpha.ids('memory').length, alpha.ids('session_summary').length], [true, 3, 1]);
    for (const t of TRANSPORTS) {
      const own = await sides[t].alpha.call('recall_context', { query: 'zorblaxquint scheduler', max_items: 50, max_tokens: 12000 });
      assert.match(own.content[0].text!, /flimwobble/i, `${t}: alpha reads its own observation`);
      const theirs = await sides[t].beta.call('recall_context', { query: 'vantrelliq', max_items: 50, max_tokens: 12000 });
      assert.match(theirs.content[0].text!, /mobbleguff/i, `${t}: beta reads its own observation`);
      assert.match(theirs.content[0].text!, /kronkwallet/i, `${t}: beta reads the observation its other transport wrote`);
    }
  });

  for (const t of TRANSPORTS) {
    describe(`beta over ${t}`, () => {
      it("retrieve_memory: the session_id both projects chose ('shared-1') does not carry alpha's prompts to beta", async () => {
        const { alpha: a, beta: b } = sides[t];
        const prompt = t === 'http' ? 'Why does the zorblaxquint scheduler starve flimwobble jobs?' : 'Why does zorblaxquint retry snarfidex uploads twice?';
        await alphaAsks(a, prompt, 'shared-1');
        const args = { prompt: FOLLOW_UP, session_id: 'shared-1' };
        const probe = await b.call('retrieve_memory', args);
        const control = await a.call('retrieve_memory', args);
        assert.ok(rewritten(control).includes(prompt), `control: alpha's own follow-up is rewritten with its prompt: ${rewritten(control)}`);
        const leaks = new LeakLog(alpha);
        leaks.check(`beta retrieve_memory ${JSON.stringify(args)} (rewritten_query: ${rewritten(probe)})`, probe, args);
        leaks.assertNone();
      });

      it("retrieve_memory: alpha's transport session id, passed as session_id, does not reach alpha's prompts", async () => {
        const { alpha: a, beta: b } = sides[t];
        const prompt = t === 'http' ? 'How is the quoffelmorph cache of zorblaxquint warmed?' : 'What did plonkvertu change in zorblaxquint?';
        await alphaAsks(a, prompt);
        // The id alpha's prompts are kept under: its Mcp-Session-Id, the account's session over
        // stdio too (the user sees it in the request log).
        const logged = (await engine.listRequests(alphaScope, 1000)).find((r) => r.arguments.includes(prompt));
        const sessionId = logged?.session_id ?? '';
        if (t === 'http') assert.equal(sessionId, (a.client.transport as StreamableHTTPClientTransport).sessionId);
        else assert.equal(sessionId, accountSessionId(ALPHA));
        alpha.sessions.add(sessionId);
        const args = { prompt: FOLLOW_UP, session_id: sessionId };
        const probe = await b.call('retrieve_memory', args);
        const control = await a.call('retrieve_memory', { prompt: FOLLOW_UP });
        assert.ok(rewritten(control).includes(prompt), `control: ${rewritten(control)}`);
        const leaks = new LeakLog(alpha);
        leaks.check(`beta retrieve_memory ${JSON.stringify(args)} (rewritten_query: ${rewritten(probe)})`, probe, args);
        leaks.assertNone();
      });

      it("retrieve_memory: the id of alpha's account session is no way in", async () => {
        const { beta: b } = sides[t];
        const prompt = t === 'http' ? 'Where does zorblaxquint log gribbleshank failures?' : 'Who owns the wuzzlecrant limits of zorblaxquint?';
        alpha.prompts.add(prompt);
        // A client that sends no Mcp-Session-Id lands in the server's default session.
        await rawToolCall(alphaHttp, 'retrieve_memory', { prompt });
        const control = await rawToolCall(alphaHttp, 'retrieve_memory', { prompt: FOLLOW_UP });
        assert.ok(rewritten(control).includes(prompt), `control: ${rewritten(control)}`);
        const args = { prompt: FOLLOW_UP, session_id: accountSessionId(ALPHA) };
        const probe = await b.call('retrieve_memory', args);
        const leaks = new LeakLog(alpha);
        leaks.check(`beta retrieve_memory ${JSON.stringify(args)} (rewritten_query: ${rewritten(probe)})`, probe, args);
        leaks.assertNone();
      });

      it("retrieve_memory without a session id stays in beta's own session", async () => {
        const { alpha: a, beta: b } = sides[t];
        const prompt = t === 'http' ? 'Why is yaffleton kept out of zorblaxquint retries?' : 'How does mornaflux reach the zorblaxquint index?';
        await alphaAsks(a, prompt);
        await rawToolCall(alphaHttp, 'retrieve_memory', { prompt });
        const leaks = new LeakLog(alpha);
        leaks.check(`beta retrieve_memory {prompt: '${FOLLOW_UP}'} over its own ${t} session`, await b.call('retrieve_memory', { prompt: FOLLOW_UP }), FOLLOW_UP);
        if (t === 'http') {
          const fresh = await httpSide(BETA, betaHttp);
          try {
            leaks.check('beta retrieve_memory over a fresh Mcp-Session-Id', await fresh.call('retrieve_memory', { prompt: FOLLOW_UP }), FOLLOW_UP);
          } finally {
            await fresh.client.close();
          }
          leaks.check('beta retrieve_memory without Mcp-Session-Id (the default session)', await rawToolCall(betaHttp, 'retrieve_memory', { prompt: FOLLOW_UP }), FOLLOW_UP);
        }
        leaks.assertNone();
      });

      it("retrieve_memory, recall_context and recall on alpha's words, file, commit and type find nothing of alpha", async () => {
        const { alpha: a, beta: b } = sides[t];
        const queries = ['zorblaxquint', 'flimwobble quoffelmorph scheduler', 'snarfidex plonkvertu cache', 'drimblepox yaffleton retries', 'gribbleshank wuzzlecrant', 'mornaflux pentravoke shared index', ALPHA_SHA.slice(0, 12), ALPHA_FILE, ALPHA_TYPE];
        const control = await a.call('recall_context', { query: 'drimblepox yaffleton retries', max_items: 50, max_tokens: 12000 });
        assert.match(control.content[0].text!, /zorblaxquint owns every drimblepox retry/, 'control: alpha finds its memory');
        const leaks = new LeakLog(alpha);
        for (const q of queries) {
          for (const [name, args] of [
            ['retrieve_memory', { prompt: q, session_id: `beta-${t}-words` }],
            ['recall_context', { query: q, max_items: 50, max_tokens: 12000 }],
            ['recall', { text: q, k: 200 }],
          ] as const) {
            leaks.check(`beta ${name} ${JSON.stringify(args)}`, await b.call(name, args), args);
          }
        }
        leaks.assertNone();
      });

      it("recall filters on alpha's sessions, file, commit and type give beta no node", async () => {
        const { alpha: a, beta: b } = sides[t];
        const filters: Array<Record<string, unknown>> = [
          { session_id: firstSession },
          { session_id: openSession },
          { session_id: stdioSession },
          { files: [ALPHA_FILE] },
          { commit_sha: ALPHA_SHA.slice(0, 8) },
          { type: ALPHA_TYPE },
          { type: [ALPHA_TYPE, 'decision'], layer: 'L0' },
        ];
        // beta's own rows may carry alpha's session id (the write probes give it to them): only
        // a node that is not beta's counts.
        const betaNodes = new Set((await rows(TABLES.cells, `project = ${sqlString(BETA)}`)).map((r) => String(r.node_id)));
        const got: string[] = [];
        const leaks = new LeakLog(alpha);
        for (const filter of filters) {
          const args = { text: 'zorblaxquint', k: 200, filter };
          assert.ok(nodeIdsOf(await a.call('recall', args)).length > 0, `control: alpha's recall ${JSON.stringify(filter)} finds its nodes`);
          const probe = await b.call('recall', args);
          assert.equal(probe.isError, false, probe.content[0].text);
          const foreign = nodeIdsOf(probe).filter((id) => !betaNodes.has(id));
          if (foreign.length > 0) got.push(`${JSON.stringify(filter)} -> ${foreign.join(', ')}`);
          leaks.check(`beta recall ${JSON.stringify(args)}`, probe, args);
        }
        assert.deepEqual(got, [], 'beta got nodes for filters on alpha-only values');
        leaks.assertNone();
      });

      it("get_observations with alpha's ids: not_found for every source, with and without project 'alpha' and include_suppressed; alpha's access times stay", async () => {
        const { alpha: a, beta: b } = sides[t];
        const access = async () =>
          JSON.stringify([
            await rows(TABLES.observations, `project = 'alpha'`).then((r) => r.map((x) => [x.id, x.last_accessed_epoch])),
            await rows(TABLES.memories, `project = 'alpha'`).then((r) => r.map((x) => [x.id, x.last_accessed_epoch])),
            await rows(TABLES.cells, `project = 'alpha'`).then((r) => r.map((x) => [x.node_id, x.access_count, x.last_accessed_epoch])),
          ]);
        const before = await access();
        const wrong: string[] = [];
        const leaks = new LeakLog(alpha);
        const betaObservation = beta.ids('observation')[0];
        const probes: Array<Record<string, unknown>> = [];
        for (const source of ['observation', 'memory', 'session_summary'] as const) {
          const ids = alpha.ids(source);
          for (const extra of [{}, { project: ALPHA }, { include_suppressed: true }, { project: ALPHA, include_suppressed: true }]) probes.push({ ids, source, ...extra });
          for (const id of ids) probes.push({ ids: [id], source });
        }
        probes.push({ ids: alpha.ids('memory') }, { ids: [alpha.ids('memory')[0]], project: ALPHA, include_suppressed: true });
        probes.push({ ids: [betaObservation, alpha.ids('observation')[0]], source: 'observation' }, { ids: [betaObservation], source: 'observation', project: ALPHA });
        for (const args of probes) {
          const probe = await b.call('get_observations', args);
          if (probe.isError !== true || !/^not_found:/.test(probe.content[0].text ?? '')) wrong.push(`${JSON.stringify(args)} -> ${probe.content[0].text?.slice(0, 200)}`);
          leaks.check(`beta get_observations ${JSON.stringify(args)}`, probe, args);
        }
        assert.equal(await access(), before, "beta's calls changed alpha's access times");
        assert.deepEqual(wrong, [], 'beta got something other than not_found');
        leaks.assertNone();
        // Controls: the same calls work for alpha, so the refusals above are about the scope.
        const own = await a.call('get_observations', { ids: alpha.ids('observation'), source: 'observation', project: ALPHA, include_suppressed: true });
        assert.equal(structured<{ details: unknown[] }>(own).details.length, alpha.ids('observation').length);
        const hidden = await a.call('get_observations', { ids: [suppressedIds.memory] });
        assert.match(hidden.content[0].text!, /^not_found:/, 'control: a suppressed memory needs include_suppressed');
        assert.equal(structured<{ details: unknown[] }>(await a.call('get_observations', { ids: [suppressedIds.memory], include_suppressed: true })).details.length, 1);
        assert.equal(structured<{ details: unknown[] }>(await a.call('get_observations', { ids: alpha.ids('session_summary'), source: 'session_summary' })).details.length, 1);
      });

      it("remember and observe cannot name alpha, and alpha's session id does not move beta's writes into alpha", async () => {
        const { beta: b } = sides[t];
        const alphaState = async () => JSON.stringify([await engine.stats(alphaScope), (await engine.listObservations(alphaScope, { sessionId: openSession })).map((o) => o.id), (await engine.listMemories(alphaScope, { includeSuppressed: true })).map((m) => m.id)]);
        const before = await alphaState();
        const refusals: string[] = [];
        for (const [name, args] of [
          ['remember', { title: `Beta memory over ${t}`, text: 'vantrelliq', project: ALPHA }],
          ['observe', { observations: [{ type: 'note', title: 'vantrelliq', project: ALPHA }] }],
          ['observe', { observations: [{ type: 'note', title: 'vantrelliq' }], project: ALPHA }],
          ['observe', { observations: [{ type: 'note', title: 'vantrelliq' }], scope: alphaScope }],
        ] as const) {
          const result = await b.call(name, args);
          if (result.isError !== true || !/^invalid_arguments:/.test(result.content[0].text ?? '')) refusals.push(`${name} ${JSON.stringify(args)} -> ${result.content[0].text}`);
        }
        assert.deepEqual(refusals, [], 'beta could name project alpha in a write');
        const memory = structured<{ id: number; project: string }>(await b.call('remember', { title: `Beezlefrump memory over ${t}`, text: 'Vantrelliq remembers this in its own project.', session_id: openSession }));
        assert.equal(memory.project, BETA);
        const [observed] = await observe(b, [{ type: 'note', title: `Chuffnagle note over ${t}`, narrative: 'Vantrelliq observes this in its own project.', memory_session_id: openSession }]);
        assert.deepEqual((await engine.getObservations([observed], betaScope)).map((o) => o.project), [BETA]);
        assert.deepEqual((await engine.getMemories([memory.id], betaScope)).map((m) => m.project), [BETA]);
        assert.equal(await alphaState(), before, "beta's writes changed alpha's counts, its open session or its memories");
      });
    });
  }

  describe('beta over HTTP: sessions, REST routes and tokens', () => {
    it("an Mcp-Session-Id alpha's server handed out, sent to beta's server, does not reach alpha's prompts", async () => {
      const a = sides.http.alpha;
      const handedOut = (a.client.transport as StreamableHTTPClientTransport).sessionId!;
      const prompt = 'Which flimwobble jobs does zorblaxquint drop first?';
      await alphaAsks(a, prompt);
      const control = await a.call('retrieve_memory', { prompt: FOLLOW_UP });
      assert.ok(rewritten(control).includes(prompt), `control: ${rewritten(control)}`);
      const leaks = new LeakLog(alpha);
      const resumed = await httpSide(BETA, betaHttp, handedOut);
      try {
        const probe = await resumed.call('retrieve_memory', { prompt: FOLLOW_UP });
        leaks.check(`beta's SDK client resuming Mcp-Session-Id ${handedOut}: retrieve_memory {prompt: '${FOLLOW_UP}'} (rewritten_query: ${rewritten(probe)})`, probe, FOLLOW_UP);
      } finally {
        await resumed.client.close();
      }
      const raw = await rawToolCall(betaHttp, 'retrieve_memory', { prompt: FOLLOW_UP }, { 'mcp-session-id': handedOut });
      leaks.check(`beta POST with Mcp-Session-Id ${handedOut}: retrieve_memory (rewritten_query: ${rewritten(raw)})`, raw, FOLLOW_UP);
      leaks.assertNone();
    });

    it("GET /v1/nodes/{id}: every node of alpha is 404 on beta's server, and the body names nothing of alpha", async () => {
      const wrong: string[] = [];
      const leaks = new LeakLog(alpha);
      for (const id of alpha.nodeIds) {
        const control = await rest(alphaHttp, `/v1/nodes/${id}`);
        assert.equal(control.status, 200, `control: alpha hydrates its node ${id}`);
        for (const variant of [id, id.toUpperCase()]) {
          const probe = await rest(betaHttp, `/v1/nodes/${variant}`);
          if (probe.status !== 404) wrong.push(`${variant} -> ${probe.status}`);
          leaks.check(`beta GET /v1/nodes/${variant}`, probe.body, variant);
        }
      }
      assert.deepEqual(wrong, []);
      leaks.assertNone();
    });

    it("GET /v1/dev/mcp-requests on beta's server lists none of alpha's requests", async () => {
      const alphaLog = (JSON.parse((await rest(alphaHttp, '/v1/dev/mcp-requests?limit=1000')).body) as { requests: Array<{ request_id: string; arguments: string }> }).requests;
      assert.ok(alphaLog.some((r) => [...alpha.prompts].some((p) => r.arguments.includes(p))), "control: alpha's log holds its prompts");
      const reply = await rest(betaHttp, '/v1/dev/mcp-requests?limit=1000');
      assert.equal(reply.status, 200);
      const requests = (JSON.parse(reply.body) as { requests: Array<{ request_id: string; project: string; arguments: string; session_id: string | null }> }).requests;
      assert.ok(requests.length > 0, "beta's own requests are listed");
      assert.deepEqual(requests.filter((r) => r.project !== BETA).map((r) => r.request_id), [], 'requests of another project');
      const alphaIds = new Set(alphaLog.map((r) => r.request_id));
      assert.deepEqual(requests.filter((r) => alphaIds.has(r.request_id)).map((r) => r.request_id), [], "alpha's request ids");
      const leaks = new LeakLog(alpha);
      // What beta's own client sent (its arguments and the session id it chose) is not a leak.
      for (const r of requests) leaks.check(`beta's request log entry ${JSON.stringify(r).slice(0, 300)}`, r, [r.arguments, r.session_id]);
      leaks.assertNone();
    });

    it("GET /v1/health on beta's server counts beta alone, and alpha's writes do not move it", async () => {
      const read = async () => {
        const reply = await rest(betaHttp, '/v1/health');
        assert.equal(reply.status, 200);
        return JSON.parse(reply.body) as { project: string; stats: { observations: number; memories: number; session_summaries: number; cells: number; cells_with_vectors: number; projects: string[] } };
      };
      // Beta's own cells get their vectors in the background: wait for that, so that only a
      // leak of alpha's write could move the counts between the two reads.
      let first = await read();
      for (let i = 0; i < 200 && first.stats.cells_with_vectors < first.stats.cells; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        first = await read();
      }
      assert.equal(first.stats.cells_with_vectors, first.stats.cells, "beta's cells all have vectors within 20 s");
      await observe(sides.http.alpha, [{ type: 'note', title: 'Zorblaxquint health probe', narrative: 'flimwobble counts must not move beta.' }]);
      const again = await read();
      assert.equal(again.project, BETA);
      assert.deepEqual(again.stats.projects, [BETA]);
      assert.deepEqual(again.stats, first.stats, "alpha's write changed beta's counts");
      const count = (table: TableName) => engine.store.count(table, `project = ${sqlString(BETA)}`);
      assert.deepEqual(
        [again.stats.observations, again.stats.memories, again.stats.session_summaries, again.stats.cells],
        [await count(TABLES.observations), await count(TABLES.memories), await count(TABLES.sessionSummaries), await count(TABLES.cells)],
      );
      const leaks = new LeakLog(alpha);
      leaks.check('beta GET /v1/health', again);
      leaks.assertNone();
      await alpha.refresh();
    });

    it("POST /v1/observations on beta's server: a project field is refused, and alpha's session id keeps the row in beta", async () => {
      const before = JSON.stringify(await engine.stats(alphaScope));
      for (const body of [{ type: 'note', title: 'vantrelliq', project: ALPHA }, { observations: [{ type: 'note', title: 'vantrelliq', project: ALPHA }] }, { observations: [{ type: 'note', title: 'vantrelliq' }], project: ALPHA }]) {
        const reply = await rest(betaHttp, '/v1/observations', { method: 'POST', body });
        assert.equal(reply.status, 400, `${JSON.stringify(body)} -> ${reply.status} ${reply.body}`);
      }
      const reply = await rest(betaHttp, '/v1/observations', { method: 'POST', body: { observations: [{ type: 'note', title: 'Trinquashy note posted to beta', narrative: 'vantrelliq', memory_session_id: openSession }] } });
      assert.equal(reply.status, 201, reply.body);
      const { ids } = JSON.parse(reply.body) as { ids: number[] };
      assert.deepEqual((await engine.getObservations(ids, betaScope)).map((o) => o.project), [BETA]);
      assert.equal(JSON.stringify(await engine.stats(alphaScope)), before, "beta's REST writes changed alpha's counts");
    });

    it("each server's token opens only that server", async () => {
      const wrong: string[] = [];
      for (const [server, token, who] of [[betaHttp, alphaHttp.token, "alpha's token on beta's server"], [alphaHttp, betaHttp.token, "beta's token on alpha's server"]] as const) {
        for (const route of ['/v1/health', '/v1/dev/mcp-requests', `/v1/nodes/${[...alpha.nodeIds][0]}`]) {
          const reply = await rest(server, route, { token });
          if (reply.status !== 401) wrong.push(`${who}: GET ${route} -> ${reply.status}`);
        }
        const reply = await rest(server, '/v1/mcp/memory', { method: 'POST', token, headers: { accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } });
        if (reply.status !== 401) wrong.push(`${who}: POST /v1/mcp/memory -> ${reply.status}`);
      }
      assert.deepEqual(wrong, []);
    });
  });

  describe('the CLI', () => {
    it("`code-memory node <alpha's node>` under beta (--project, CODE_MEMORY_PROJECT, a folder named beta) finds nothing", async () => {
      const observationNode = (await engine.search('zorblaxquint flimwobble scheduler', { scope: alphaScope, layers: ['L0'], limit: 1 }))[0].cell.node_id;
      const memoryNode = (await engine.search('drimblepox yaffleton', { scope: alphaScope, layers: ['L2'], limit: 1 }))[0].cell.node_id;
      const betaFolder = path.join(tempDir('xproject-cwd'), BETA);
      mkdirSync(betaFolder);
      cleanup.push(path.dirname(betaFolder));
      const common = ['--store', store, '--embedder', 'hashed'];
      const [control, ...probes] = await Promise.all([
        runCli(['node', observationNode, ...common, '--project', ALPHA, '--json']),
        runCli(['node', observationNode, ...common, '--project', BETA, '--json']).then((r) => ({ how: '--project beta', node: observationNode, ...r })),
        runCli(['node', memoryNode, ...common, '--json'], { env: { CODE_MEMORY_PROJECT: BETA } }).then((r) => ({ how: 'CODE_MEMORY_PROJECT=beta', node: memoryNode, ...r })),
        runCli(['node', observationNode, ...common], { cwd: betaFolder }).then((r) => ({ how: 'a folder named beta', node: observationNode, ...r })),
      ]);
      assert.equal(control.code, 0, control.stderr);
      assert.match(control.stdout, /flimwobble/, "control: the CLI shows alpha's node under alpha");
      const leaks = new LeakLog(alpha);
      const wrong: string[] = [];
      for (const p of probes) {
        // A folder named beta without a remote is the project beta-<its path's digest>.
        if (p.code !== 1 || !/no node .* in project 'beta(-[0-9a-f]{8})?'/.test(p.stderr)) wrong.push(`${p.how} ${p.node} -> exit ${p.code}: ${p.stderr.trim()}`);
        leaks.check(`code-memory node ${p.node} (${p.how})`, p.stdout + p.stderr, p.node);
      }
      assert.deepEqual(wrong, []);
      leaks.assertNone();
    });
  });

  describe('the reverse direction, a sample', () => {
    it('alpha reaches nothing of beta by shared session, text, ids or nodes', async () => {
      await beta.refresh();
      const prompt = 'Why does vantrelliq keep splendorix parsers?';
      beta.prompts.add(prompt);
      await sides.http.beta.call('retrieve_memory', { prompt, session_id: 'shared-2' });
      const leaks = new LeakLog(beta);
      for (const t of TRANSPORTS) {
        const a = sides[t].alpha;
        const follow = { prompt: FOLLOW_UP, session_id: 'shared-2' };
        const probe = await a.call('retrieve_memory', follow);
        leaks.check(`alpha over ${t}: retrieve_memory ${JSON.stringify(follow)} (rewritten_query: ${rewritten(probe)})`, probe, follow);
        for (const [name, args] of [
          ['recall_context', { query: 'vantrelliq mobbleguff splendorix', max_items: 50, max_tokens: 12000 }],
          ['recall', { text: 'vantrelliq', k: 200 }],
          ['get_observations', { ids: beta.ids('observation'), source: 'observation', project: BETA, include_suppressed: true }],
          ['get_observations', { ids: beta.ids('memory') }],
        ] as const) {
          const result = await a.call(name, args);
          if (name === 'get_observations') assert.match(result.content[0].text!, /^not_found:/, `alpha over ${t}: ${name} ${JSON.stringify(args)}`);
          leaks.check(`alpha over ${t}: ${name} ${JSON.stringify(args)}`, result, args);
        }
      }
      for (const id of beta.nodeIds) {
        const reply = await rest(alphaHttp, `/v1/nodes/${id}`);
        assert.equal(reply.status, 404, `beta's node ${id} on alpha's server`);
        leaks.check(`alpha GET /v1/nodes/${id}`, reply.body, id);
      }
      leaks.assertNone();
    });
  });

  describe("a session end after beta's rows were given alpha's memory_session_id", () => {
    /** alpha's rows of a session, and whatever compression wrote for it, before and after. */
    async function sessionState(sessionId: string) {
      const all = (await rows(TABLES.observations, `memory_session_id = ${sqlString(sessionId)}`)) as unknown as Observation[];
      const summaries = await rows(TABLES.sessionSummaries, `memory_session_id = ${sqlString(sessionId)}`);
      return { all, summaries };
    }

    async function checkAfterEnd(sessionId: string, alphaBefore: Observation[], betaIds: number[]): Promise<void> {
      const { all, summaries } = await sessionState(sessionId);
      assert.ok(summaries.length > 0, `the session ${sessionId} ended with a summary (the end this probe needs)`);
      const problems: string[] = [];
      for (const was of alphaBefore) {
        const now = all.find((o) => Number(o.id) === was.id);
        if (!now) problems.push(`alpha's observation ${was.id} is gone`);
        else if (now.status !== 'active' || now.title !== was.title || now.narrative !== was.narrative || now.project !== ALPHA) {
          problems.push(`alpha's observation ${was.id} changed: status ${was.status} -> ${now.status}, project ${now.project}`);
        }
      }
      for (const id of betaIds) {
        const now = all.find((o) => Number(o.id) === id);
        if (!now || now.status !== 'active' || now.project !== BETA) problems.push(`beta's observation ${id}: ${now ? `status ${now.status}, project ${now.project}` : 'gone'}`);
      }
      const alphaIds = new Set(alphaBefore.map((o) => o.id));
      if (!summaries.some((s) => s.project === ALPHA)) problems.push(`alpha's ended session has no summary in alpha (summaries: ${summaries.map((s) => `${s.id} of ${s.project}`).join(', ')})`);
      for (const s of summaries) {
        const sources = JSON.parse(String(s.source_ids ?? '[]')) as number[];
        const foreign = sources.filter((id) => !alphaIds.has(id));
        if (s.project === ALPHA && foreign.length > 0) problems.push(`alpha's summary ${s.id} was built from beta's observations ${foreign.join(', ')} (observation_count ${s.observation_count})`);
        if (s.project === ALPHA) {
          const leaks = beta.leaksIn(s, sessionId);
          if (leaks.length > 0) problems.push(`alpha's summary ${s.id} holds beta's ${leaks.join(', ')}`);
        } else {
          const leaks = alpha.leaksIn(s, sessionId);
          if (leaks.length > 0) problems.push(`a summary of project ${s.project} holds alpha's ${leaks.join(', ')}`);
        }
      }
      for (const merged of all.filter((o) => o.type === 'merged')) {
        const other = merged.project === ALPHA ? beta : alpha;
        const leaks = other.leaksIn(merged, sessionId);
        if (leaks.length > 0) problems.push(`merged observation ${merged.id} of project ${merged.project} holds ${other.project}'s ${leaks.join(', ')}`);
      }
      assert.deepEqual(problems, []);
    }

    it("ended by the engine (idle end of alpha's HTTP session): alpha's rows stay active and unchanged, its summary holds nothing of beta", async () => {
      const alphaBefore = (await engine.listObservations(alphaScope, { sessionId: openSession })).filter((o) => o.type !== 'merged');
      assert.ok(alphaBefore.length >= 2);
      const b = sides.http.beta;
      const betaIds = await observe(b, [
        { type: 'edit', title: 'Mobbleguff hook for the shared index', narrative: 'Vantrelliq hooks mobbleguff into the shared index.', files_modified: [SHARED_FILE], memory_session_id: openSession },
        { type: 'edit', title: 'Trinquashy export of the shared index', narrative: 'Vantrelliq exports trinquashy from the shared index.', files_modified: [SHARED_FILE], memory_session_id: openSession },
      ]);
      const posted = await rest(betaHttp, '/v1/observations', { method: 'POST', body: { type: 'edit', title: 'Kronkwallet guard in the shared index', narrative: 'Vantrelliq guards kronkwallet in the shared index.', files_modified: [SHARED_FILE], memory_session_id: openSession } });
      betaIds.push(...(JSON.parse(posted.body) as { ids: number[] }).ids);
      const prompt = 'Which beezlefrump rules does vantrelliq follow?';
      beta.prompts.add(prompt);
      await b.call('retrieve_memory', { prompt, session_id: openSession });
      await beta.refresh();
      await engine.endSession(alphaScope, openSession, 'idle');
      await checkAfterEnd(openSession, alphaBefore, betaIds);
    });

    it("ended by alpha's stdio agent disconnecting: the same", async () => {
      const alphaBefore = (await engine.listObservations(alphaScope, { sessionId: stdioSession })).filter((o) => o.type !== 'merged');
      assert.ok(alphaBefore.length >= 2);
      const b = sides.stdio.beta;
      const betaIds = await observe(b, [
        { type: 'edit', title: 'Splendorix hook for the shared index', narrative: 'Vantrelliq hooks splendorix into the shared index.', files_modified: [SHARED_FILE], memory_session_id: stdioSession },
        { type: 'edit', title: 'Chuffnagle export of the shared index', narrative: 'Vantrelliq exports chuffnagle from the shared index.', files_modified: [SHARED_FILE], memory_session_id: stdioSession },
      ]);
      const prompt = 'Which kronkwallet limits does vantrelliq keep?';
      beta.prompts.add(prompt);
      await b.call('retrieve_memory', { prompt, session_id: stdioSession });
      await beta.refresh();
      // Closing the client ends the `code-memory mcp` process, which ends its open session.
      await sides.stdio.alpha.client.close();
      await checkAfterEnd(stdioSession, alphaBefore, betaIds);
    });

    it("afterwards beta's clients still find nothing of alpha, new summaries and merged rows included", async () => {
      await alpha.refresh();
      const leaks = new LeakLog(alpha);
      for (const t of TRANSPORTS) {
        const b = sides[t].beta;
        for (const q of ['zorblaxquint shared index', 'mornaflux pentravoke quoffelmorph snarfidex', 'Edited src/shared/index.ts']) {
          for (const [name, args] of [
            ['retrieve_memory', { prompt: q, session_id: `beta-${t}-after` }],
            ['recall_context', { query: q, max_items: 50, max_tokens: 12000 }],
            ['recall', { text: q, k: 200 }],
          ] as const) {
            leaks.check(`beta over ${t}: ${name} ${JSON.stringify(args)}`, await b.call(name, args), args);
          }
        }
        for (const source of ['observation', 'session_summary'] as const) {
          const args = { ids: alpha.ids(source), source, project: ALPHA, include_suppressed: true };
          const result = await b.call('get_observations', args);
          assert.match(result.content[0].text!, /^not_found:/, `beta over ${t}: get_observations ${source}`);
          leaks.check(`beta over ${t}: get_observations ${JSON.stringify(args)}`, result, args);
        }
      }
      for (const id of alpha.nodeIds) {
        const reply = await rest(betaHttp, `/v1/nodes/${id}`);
        leaks.check(`beta GET /v1/nodes/${id} -> ${reply.status}`, reply.body, id);
      }
      leaks.assertNone();
    });
  });
});
