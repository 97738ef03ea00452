// retrieve_memory's triage: a short follow-up ("and why was that chosen?") is rewritten with the
// session's last 3 prompts; a self-contained question ("... in this project ...") is searched as
// asked, whatever came before it in the session (README, retrieve_memory).
import * as assert from 'node:assert/strict';
import { isFollowUp, triage } from '../../src/core/tools/triage';
import { OTHER, SCOPE, httpToolHarness } from './httpToolHarness';
import type { CallResult } from './httpToolHarness';
import { seed } from './mcpFixture';

type Out = { triage: { rewritten_query: string }; retrieval: { facts: Array<{ source_path: string }> } };
const out = (r: CallResult): Out => r.structuredContent as unknown as Out;

describe('triage: follow-ups and self-contained questions over MCP', function () {
  this.timeout(180_000);
  const h = httpToolHarness({ fill: (engine) => seed(engine, SCOPE, OTHER).then(() => undefined) });
  const { call } = h;

  it('a question that names its subject ("this project") is searched as asked after another prompt', async () => {
    const sid = `self-${Date.now()}`;
    await call('retrieve_memory', { prompt: 'Which vector store did we decide on for the embedded memory?', session_id: sid });
    for (const prompt of ['What retry policy does the HTTP client in this project use?', 'Which tokenizer counts tokens in this project?', 'Where is the CSV parser?', 'is that file still used?']) {
      assert.equal(out(await call('retrieve_memory', { prompt, session_id: sid })).triage.rewritten_query, prompt, prompt);
    }
  });

  it('a self-contained question ranks the same facts with or without a prior prompt', async () => {
    const prompt = 'Which tokenizer counts tokens in this project?';
    const alone = out(await call('retrieve_memory', { prompt, session_id: `alone-${Date.now()}` }));
    const sid = `after-${Date.now()}`;
    await call('retrieve_memory', { prompt: 'Switched the vector store to LanceDB: why was LanceDB picked over SQLite?', session_id: sid });
    const after = out(await call('retrieve_memory', { prompt, session_id: sid }));
    assert.deepEqual(after.retrieval.facts.map((f) => f.source_path), alone.retrieval.facts.map((f) => f.source_path), after.triage.rewritten_query);
  });

  it('a real follow-up is still rewritten with the last 3 prompts, newest first', async () => {
    const sid = `follow-${Date.now()}`;
    for (const p of ['How are tokens counted in recall_context?', 'What is the retry policy?', 'Which tokenizer do we use?']) await call('retrieve_memory', { prompt: p, session_id: sid });
    const r = out(await call('retrieve_memory', { prompt: 'and why was that chosen?', session_id: sid }));
    assert.equal(r.triage.rewritten_query, 'and why was that chosen? (follow-up to: Which tokenizer do we use? / What is the retry policy? / How are tokens counted in recall_context?)');
  });
});

describe('triage: what counts as a follow-up', () => {
  const followUps = ['and why was that chosen?', 'why was that chosen?', 'and why?', 'why that?', 'and that one?', 'who wrote it?', 'where is it used?', 'what about the CSV parser?', 'why not Redis?', 'is that still true?', 'the same for the tests?'];
  const selfContained = [
    'What retry policy does the HTTP client in this project use?',
    'Which tokenizer counts tokens in this project?',
    'Which tokenizer does this project use?',
    'is that file still used?',
    'what does this function do?',
    'Where is the CSV parser?',
    'Why was LanceDB picked over SQLite?',
    'Explain the import wizard CSV parser',
    'and how does the retry policy of the HTTP client handle timeouts there?',
  ];
  for (const p of followUps) {
    it(`"${p}" leans on the turns before`, () => {
      assert.equal(isFollowUp(p), true);
      assert.equal(triage(p, ['Which vector store do we use?']).rewritten_query, `${p} (follow-up to: Which vector store do we use?)`);
    });
  }
  for (const p of selfContained) {
    it(`"${p}" stands on its own`, () => {
      assert.equal(isFollowUp(p), false);
      assert.equal(triage(p, ['Which vector store do we use?']).rewritten_query, p);
    });
  }
});
