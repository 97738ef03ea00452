import type { TeamStatus } from './teamMemory';

/**
 * Why a share or unshare waits in the queue, and when it goes out: the team store refused it (it
 * answered: a missing bucket, keys or rights refused, an endpoint that ignores conditional PUT), or
 * it did not answer. The CLI's lines and the window's messages say it alike.
 */
export function queuedReason(s: TeamStatus): string {
  return s.state === 'refused' ? `the team store refused it: ${s.message ?? 'no reason given'}; it goes out once the store accepts it` : 'the team store is not reachable; it goes out when it is';
}
