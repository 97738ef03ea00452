// One JSON POST to a model server the user configured (an OpenAI-compatible /embeddings, a
// /rerank), with errors that say what to fix: unreachable, too slow, or what it answered.

export interface ModelServerRequest {
  /** Names the server in errors, e.g. "Embedding server". */
  label: string;
  apiKey?: string;
  timeoutMs: number;
}

export async function postJson(url: string, body: unknown, request: ModelServerRequest): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.apiKey) headers.authorization = `Bearer ${request.apiKey}`;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(request.timeoutMs) });
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError') throw new Error(`${request.label} ${url} gave no answer within ${request.timeoutMs} ms`);
    throw new Error(`${request.label} ${url} is not reachable (${e.message}). Is it running?`);
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).slice(0, 300);
    throw new Error(`${request.label} ${url} answered ${res.status}: ${text || res.statusText}`);
  }
  try {
    return await res.json();
  } catch {
    throw new Error(`${request.label} ${url} answered with something other than JSON`);
  }
}
