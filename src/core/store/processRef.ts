// The process a lock, the maintenance lease or a forget journal names as its holder, and whether
// that process still runs. A pid alone is not enough: once its holder ended (killed, or the
// machine rebooted), the pid can be handed to an unrelated process, and a lock or journal that
// names it would then wait for that process forever. On Linux a reference also carries when the
// process started (its start time in clock ticks since boot, and the boot's id), and a pid that
// now names a process started at another time is the holder's no longer. Elsewhere (or without
// /proc) the pid alone decides, as before.

import * as fs from 'node:fs';
import * as os from 'node:os';

export interface ProcessRef {
  pid: number;
  host: string;
  /** Linux: `<boot id>/<start time in ticks>`; absent where it cannot be read. */
  started?: string;
}

let bootId: string | null | undefined;

function readBootId(): string | null {
  if (bootId === undefined) {
    try {
      bootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      bootId = null;
    }
  }
  return bootId;
}

/** When `pid` started, as `started` records it; undefined when it cannot be read (not Linux, no such process). */
export function processStarted(pid: number): string | undefined {
  const boot = readBootId();
  if (!boot) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces and parentheses): the state is
    // field 3, the start time field 22.
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return ticks && /^\d+$/.test(ticks) ? `${boot}/${ticks}` : undefined;
  } catch {
    return undefined;
  }
}

let self: ProcessRef | undefined;

/** This process, as it names itself in what it holds. */
export function thisProcess(): ProcessRef {
  if (!self || self.pid !== process.pid) {
    const started = processStarted(process.pid);
    self = { pid: process.pid, host: os.hostname(), ...(started ? { started } : {}) };
  }
  return { ...self };
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `running`: the process named runs on this host; `ended`: it does not (its pid is free, or now
 * names a process that started at another time); `elsewhere`: another host's, which this host
 * cannot see.
 */
export function processState(ref: { pid: number; host: string; started?: unknown }): 'running' | 'ended' | 'elsewhere' {
  if (ref.host !== os.hostname()) return 'elsewhere';
  if (!processAlive(ref.pid)) return 'ended';
  if (typeof ref.started === 'string') {
    const now = processStarted(ref.pid);
    if (now !== undefined && now !== ref.started) return 'ended';
  }
  return 'running';
}
