// How an error reads where it is shown (the CLI, doctor, the team store's state).

/**
 * A request to object storage that got no answer in time, as Lance (object_store) reports it:
 * its method, the endpoint, the path (the query, which may hold a SAS, left out) and the wait.
 */
const UNANSWERED = /Error performing (GET|PUT|POST|DELETE|HEAD) (https?:\/\/[^/\s?#]+)([^\s?#,]*)\S* in ([\d.]+)s - HTTP error: error sending request/;

/**
 * An error's message without what only repeats it: LanceDB's carry the source path of the Rust
 * line that raised them and the same text again as a chain of causes; both go.
 */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String((error as Error)?.message ?? error);
  const silent = /timed out/i.test(text) ? UNANSWERED.exec(text) : null;
  if (silent) {
    const [, method, origin, where, seconds] = silent;
    return `the object store at ${origin} did not answer: a ${method} of ${where || '/'} got no answer in ${Math.round(Number(seconds))} s (check the network, a VPN or proxy, and the endpoint)`;
  }
  return text
    .replace(/,?\s*\/\S*?\.rs:\d+:\d+/g, '')
    .replace(/\s+Caused by:[\s\S]*$/, '')
    .trim();
}

/** errorMessage, at most about `max` characters: its start says what failed, its end why, so both are kept. */
export function briefError(error: unknown, max = 500): string {
  const text = errorMessage(error).split('\n')[0];
  if (text.length <= max) return text;
  const tail = Math.floor(max * 0.4);
  return `${text.slice(0, max - tail)} … ${text.slice(-tail)}`;
}
