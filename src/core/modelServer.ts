// One JSON POST to a model server the user configured (an OpenAI-compatible /embeddings, a
// /rerank), with errors that say what to fix: unreachable, too slow, or what it answered.
// Errors end up in logs and on stderr: the endpoint is shown without credentials written into it
// (`http://user:password@host`), and what the server or the network says passes through redact()
// (a server that echoes the API key it refused: the key is registered, see registerSecret).

import { REDACTED, redact } from './capture/redact';
import { displayUri } from './store/objectStorage';

/** How much of an error body is read for the 300 characters shown (a secret that starts in them ends in it). */
const MAX_BODY_CHARS = 4096;

export interface ModelServerRequest {
  /** Names the server in errors, e.g. "Embedding server". */
  label: string;
  apiKey?: string;
  timeoutMs: number;
}

/**
 * Text a server or the network produced (an error body, fetch's message, which may quote the
 * URL whole), as an error may carry it: the URL shown as displayUri shows it (credentials and query replaced), then redacted.
 */
export function serverText(text: string, url: string, apiKey?: string): string {
  let out = text;
  const shown = displayUri(url);
  for (const form of new Set([url, normalisedUrl(url)])) if (form && form !== shown) out = out.split(form).join(shown);
  // The request's own key, whether or not its holder registered it.
  if (apiKey && apiKey.length >= 8) out = out.split(apiKey).join(REDACTED);
  return redact(out);
}

function normalisedUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return '';
  }
}

export async function postJson(url: string, body: unknown, request: ModelServerRequest): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.apiKey) headers.authorization = `Bearer ${request.apiKey}`;
  const where = `${request.label} ${displayUri(url)}`;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(request.timeoutMs) });
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError') throw new Error(`${where} gave no answer within ${request.timeoutMs} ms`);
    throw new Error(`${where} is not reachable (${serverText(String(e.message), url, request.apiKey)}). Is it running?`);
  }
  if (!res.ok) {
    // Redacted, then cut to what is shown: a secret cut in two would no longer be recognised.
    const body = (await res.text().catch(() => '')).slice(0, MAX_BODY_CHARS);
    const text = serverText(body, url, request.apiKey).slice(0, 300);
    throw new Error(`${where} answered ${res.status}: ${text || serverText(res.statusText, url, request.apiKey)}`);
  }
  try {
    return await res.json();
  } catch {
    throw new Error(`${where} answered with something other than JSON`);
  }
}
