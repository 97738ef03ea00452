// How an error reads where it is shown (the CLI, doctor, the team store's state).

/**
 * An error's message without what only repeats it: LanceDB's carry the source path of the Rust
 * line that raised them and the same text again as a chain of causes; both go.
 */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String((error as Error)?.message ?? error);
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
