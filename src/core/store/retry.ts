// Retries of LanceDB calls that lose a race: a commit conflict with another writer, or a read
// of a version whose files another process just pruned.

const CONFLICT = /conflict|retryable|too many concurrent writers/i;

const VANISHED = /Not found:.*\.(?:lance|manifest|idx)|No such file or directory/i;

export function isCommitConflict(e: unknown): boolean {
  return CONFLICT.test(String((e as Error)?.message ?? e));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Run fn, retrying LanceDB commit conflicts with jittered backoff. */
export async function retryConflicts<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
  let delay = 20;
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (i + 1 >= attempts || !(isCommitConflict(e) || isVanished(e))) throw e;
      await sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 2000);
    }
  }
}

/**
 * A read that started on a version whose files another process just pruned fails with "Not
 * found"; the latest version is intact, so read again.
 */
function isVanished(e: unknown): boolean {
  return VANISHED.test(String((e as Error)?.message ?? e));
}

export async function retryVanished<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (i + 1 >= attempts || !isVanished(e)) throw e;
      await sleep(10 * (i + 1));
    }
  }
}
