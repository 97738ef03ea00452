import { looksLikeNetwork } from '../errorText';
import type { TeamStatus } from './teamMemory';

/**
 * Why a share or unshare waits in the queue, and when it goes out: the team store refused it (it
 * answered: a missing bucket, keys or rights refused, an endpoint that ignores conditional PUT), it
 * answered with what could not be read (a damaged object in the bucket: it is reachable, so not
 * "not reachable"), or it did not answer. The CLI's lines and the window's messages say it alike.
 */
export function queuedReason(s: TeamStatus): string {
  if (s.state === 'refused') return `the team store refused it: ${s.message ?? 'no reason given'}; it goes out once the store accepts it`;
  if (s.state === 'offline' && s.message && !looksLikeNetwork(s.message)) return `the team store could not be read: ${s.message}; it goes out once it can`;
  return 'the team store is not reachable; it goes out when it is';
}
