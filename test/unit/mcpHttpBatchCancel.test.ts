// A JSON-RPC batch over HTTP that cancels (notifications/cancelled) one of its own requests: each
// POST is a stateless exchange of its own, so the cancel can only name a request of the same body,
// and every request of the body is still answered, in one JSON answer.
import * as assert from 'node:assert/strict';
import { httpToolHarness, OTHER, SCOPE } from './httpToolHarness';
import type { CallResult } from './httpToolHarness';
import { seed } from './mcpFixture';

type Answer = { jsonrpc: string; id: unknown; result?: CallResult; error?: { code: number; message: string } };

/** `promise`, or an error naming `what` when it takes longer than `ms`: a hang fails the test instead of timing it out. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const call = (id: number | string, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const cancel = (requestId: number | string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the user moved on' } });
const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('MCP over HTTP: a batch that cancels its own requests', function () {
  this.timeout(120_000);
  const h = httpToolHarness({ fill: async (engine) => void (await seed(engine, SCOPE, OTHER)) });

  async function post(body: unknown): Promise<{ status: number; text: string }> {
    const response = await within(
      fetch(h.server.url, { method: 'POST', headers: { Authorization: `Bearer ${h.server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) }),
      15_000,
      JSON.stringify(body),
    );
    return { status: response.status, text: await within(response.text(), 15_000, `the body of the answer to ${JSON.stringify(body)}`) };
  }

  it('answers every request of a batch holding a cancel of one of them (listed after it or before it), the cancelled call with its result', async () => {
    for (const body of [
      [call(1, 'retrieve_memory', { prompt: 'why LanceDB?' }), cancel(1), ping(2)],
      [cancel(1), call(1, 'recall', { text: 'LanceDB' }), ping(2)],
      [call('one', 'recall_context', { query: 'LanceDB' }), cancel('one'), ping(2)],
    ]) {
      const { status, text } = await post(body);
      assert.equal(status, 200, text);
      const answers = JSON.parse(text) as Answer[];
      const callId = (body.find((m) => 'id' in m && m.method === 'tools/call') as { id: unknown }).id;
      assert.deepEqual(answers.map((a) => a.id), [callId, 2], text);
      const [answered, pong] = answers;
      const name = (body.find((m) => 'id' in m && m.method === 'tools/call') as { params: { name: string } }).params.name;
      assert.equal(answered.result?.isError, false, text);
      h.assertValid(name, answered.result!);
      assert.deepEqual(pong.result, {});
    }
  });

  it('answers a batch of one call and its cancel with the call\'s answer alone', async () => {
    const { status, text } = await post([call(7, 'recall', { text: 'LanceDB' }), cancel(7)]);
    assert.equal(status, 200, text);
    const answer = JSON.parse(text) as Answer;
    assert.equal(answer.id, 7);
    h.assertValid('recall', answer.result!);
  });

  it('still answers a body that is only a cancel with 202 and no body, and a batch cancelling an id it does not hold as before', async () => {
    const alone = await post(cancel(1));
    assert.deepEqual(alone, { status: 202, text: '' });
    const batchOfCancels = await post([cancel(1), cancel(2)]);
    assert.deepEqual(batchOfCancels, { status: 202, text: '' });
    const { status, text } = await post([ping(3), cancel(99)]);
    assert.equal(status, 200, text);
    assert.deepEqual(JSON.parse(text), { jsonrpc: '2.0', id: 3, result: {} });
  });

  it('still refuses a batch whose cancel is no valid JSON-RPC message (400), as any other', async () => {
    const { status, text } = await post([ping(4), { method: 'notifications/cancelled', params: { requestId: 4 } }]);
    assert.equal(status, 400, text);
    assert.equal((JSON.parse(text) as Answer).error?.code, -32700);
  });
});
