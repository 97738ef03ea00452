// The process a lock, the maintenance lease or a forget journal names as its holder, and whether
// that process still runs. A pid alone is not enough: once its holder ended (killed, or the
// machine rebooted), the pid can be handed to an unrelated process, and a lock or journal that
// names it would then wait for that process forever. On Linux a reference also carries when the
// process started (its start time in clock ticks since boot, and the boot's id) and its pid
// namespace: a pid that now names a process started at another time is the holder's no longer,
// and a pid of another namespace (a container sharing the store and the host name) is not looked
// up in this one. Elsewhere (or without /proc) the pid alone decides.

import * as fs from 'node:fs';
import * as os from 'node:os';

export interface ProcessRef {
  pid: number;
  host: string;
  /** Linux: `<boot id>/<start time in ticks>`; absent where it cannot be read. */
  started?: string;
  /** Linux: the pid namespace the pid belongs to (a container's differs from its host's). */
  pidns?: string;
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

/** A process's state letter and start time from /proc; undefined when they cannot be read (not Linux, no such process). */
function readStat(pid: number): { state: string; started: string } | undefined {
  const boot = readBootId();
  if (!boot) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces and parentheses): the state is
    // field 3, the start time field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields[19];
    return ticks && /^\d+$/.test(ticks) ? { state: fields[0], started: `${boot}/${ticks}` } : undefined;
  } catch {
    return undefined;
  }
}

/** When `pid` started, as `started` records it; undefined when it cannot be read. */
export function processStarted(pid: number): string | undefined {
  return readStat(pid)?.started;
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux architecture Node runs on). */
const USER_HZ = 100;
let bootTimeMs: number | null | undefined;

/** When this machine booted, in ms since the epoch (/proc/stat's btime); null where it cannot be read. */
function readBootTime(): number | null {
  if (bootTimeMs === undefined) {
    try {
      const btime = /^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1];
      bootTimeMs = btime ? Number(btime) * 1000 : null;
    } catch {
      bootTimeMs = null;
    }
  }
  return bootTimeMs;
}

/** When `pid` started, in ms since the epoch (to the second the boot time is given in); undefined when it cannot be read. */
export function processStartedAt(pid: number): number | undefined {
  const ticks = processStarted(pid)?.split('/')[1];
  const boot = readBootTime();
  return ticks === undefined || boot === null ? undefined : boot + (Number(ticks) * 1000) / USER_HZ;
}

/** The command line of `pid` (its arguments joined by spaces); undefined when it cannot be read (not Linux, no such process). */
export function processCommandLine(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

function pidNamespace(): string | undefined {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

let self: ProcessRef | undefined;

/** This process, as it names itself in what it holds. */
export function thisProcess(): ProcessRef {
  if (!self || self.pid !== process.pid) {
    const started = processStarted(process.pid);
    const pidns = pidNamespace();
    self = { pid: process.pid, host: os.hostname(), ...(started ? { started } : {}), ...(pidns ? { pidns } : {}) };
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
 * `running`: the process named runs on this host; `ended`: it does not (its pid is free, names a
 * process that started at another time, or one that died and awaits its parent); `elsewhere`:
 * another host's, or another pid namespace's (a container's), which this process cannot see.
 */
export function processState(ref: { pid: number; host: string; started?: unknown; pidns?: unknown }): 'running' | 'ended' | 'elsewhere' {
  if (ref.host !== os.hostname()) return 'elsewhere';
  if (typeof ref.pidns === 'string' && ref.pidns !== thisProcess().pidns) return 'elsewhere';
  if (!processAlive(ref.pid)) return 'ended';
  const now = readStat(ref.pid);
  if (now?.state === 'Z') return 'ended';
  if (typeof ref.started === 'string' && now !== undefined && now.started !== ref.started) return 'ended';
  return 'running';
}

/** Whether a parsed lock, lease or journal names a process: a positive pid and a host. */
export function isProcessRef(x: unknown): boolean {
  const r = x as Partial<ProcessRef> | null;
  return !!r && typeof r === 'object' && Number.isSafeInteger(r.pid) && (r.pid as number) > 0 && typeof r.host === 'string';
}

/** How a holder is named in a message. */
export function describeProcess(ref: ProcessRef | null): string {
  return ref ? `process ${ref.pid} on ${ref.host}` : 'a process that left it unreadable';
}
