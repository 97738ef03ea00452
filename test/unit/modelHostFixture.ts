// Shared by the tests of the shared model host (sharedModel, sharedModelImpostor,
// sharedModelSocketReplaced): the model they start hosts of, and the end of each test's hosts.
import { rmSync } from 'node:fs';

/** A model that loads at once: what the hosts of these tests serve. */
export const HASHED = { provider: 'hashed', dimension: 64 } as const;

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** After a test: its hosts still running killed, and its folder removed. */
export function endHosts(hosts: Set<number>, base: string): void {
  for (const pid of hosts) if (alive(pid)) process.kill(pid, 'SIGKILL');
  hosts.clear();
  rmSync(base, { recursive: true, force: true });
}
