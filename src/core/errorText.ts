// How an error reads where it is shown (the CLI, doctor, the team store's state).

/**
 * A request to object storage, as Lance (object_store) reports it: its method, the endpoint and
 * the path (the query, which may hold a SAS, left out).
 */
const REQUEST = /Error performing (GET|PUT|POST|DELETE|HEAD) (https?:\/\/[^/\s?#]+)([^\s?#,]*)/;
/** Such a request that got no answer in time, and the wait. */
const UNANSWERED = new RegExp(`${REQUEST.source}\\S* in ([\\d.]+)s - HTTP error: error sending request`);
/** The S3 error an object store answered a request with (its XML body: code and message). */
const REFUSAL = /<Code>([A-Za-z]+)<\/Code>\s*<Message>([^<]*)<\/Message>/;

/**
 * An error's message without what only repeats it: LanceDB's carry the source path of the Rust
 * line that raised them and the same text again as a chain of causes; both go.
 */
export function errorMessage(error: unknown): string {
  const text = messageOf(error);
  const silent = unanswered(text);
  if (silent) {
    const [, method, origin, where, seconds] = silent;
    return `the object store at ${origin} did not answer: a ${method} of ${where || '/'} got no answer in ${Math.round(Number(seconds))} s (check the network, a VPN or proxy, and the endpoint)`;
  }
  const refused = REFUSAL.exec(text);
  if (refused) {
    const request = REQUEST.exec(text);
    const [, code, said] = refused;
    return `the object store${request ? ` at ${request[2]}` : ''} refused ${request ? `a ${request[1]} of ${request[3] || '/'}` : 'a request'}: ${code} (${said.trim()})${code === 'NoSuchBucket' ? ': the bucket does not exist (any more)' : ''}`;
  }
  return text
    .replace(/,?\s*\/\S*?\.rs:\d+:\d+/g, '')
    .replace(/\s+Caused by:[\s\S]*$/, '')
    .trim();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String((error as Error)?.message ?? error);
}

/** A request to object storage that got no answer in its time, as Lance reports it: method, origin, path, seconds. */
function unanswered(text: string): RegExpExecArray | null {
  return /timed out/i.test(text) ? UNANSWERED.exec(text) : null;
}

/** The endpoint (its origin) of a request to object storage that got no answer in its time, as Lance reports it; null for any other error. */
export function unansweredRequest(error: unknown): string | null {
  return unanswered(messageOf(error))?.[2] ?? null;
}

/** errorMessage, at most about `max` characters: its start says what failed, its end why, so both are kept. */
export function briefError(error: unknown, max = 500): string {
  const text = errorMessage(error).split('\n')[0];
  if (text.length <= max) return text;
  const tail = Math.floor(max * 0.4);
  return `${text.slice(0, max - tail)} … ${text.slice(-tail)}`;
}

/** Whether an error says the process lacks rights (a folder's mode, a read-only disk, credentials). */
export function looksLikeRights(message: string): boolean {
  return /permission denied|EACCES|EPERM|read-only file system|credentials|AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|ExpiredToken/i.test(message);
}

/**
 * Whether an error says object storage did not answer (or stayed busy): Lance's words, or ours.
 * An answer that refuses (401, 403) or finds nothing (404: a file of the store missing) is not.
 */
export function looksLikeNetwork(message: string): boolean {
  if (/status code: 40[134]|HTTP 40[134]|not found|forbidden|unauthori[sz]ed|AuthorizationPermissionMismatch|AccessDenied/i.test(message)) return false;
  return /error sending request|request or response body error|error decoding response body|did not answer|is busy or failing|after \d+ retr|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|timed out|connection (refused|reset|closed)|status code: (5\d\d|429)|HTTP (5\d\d|429)/i.test(message);
}

/**
 * Whether an error says the disk is full, or the user's disk quota spent. LanceDB reports it as
 * any other failed write ("LanceError(IO): No space left on device (os error 28)"), yet the store's
 * files are whole: the write that failed is not part of them.
 */
export function looksLikeFullDisk(message: string): boolean {
  return /No space left on device|ENOSPC|os error 28\b|Disk quota exceeded|EDQUOT/i.test(message);
}

/**
 * What to do about a full disk, said wherever a damaged store would be (the CLI, the tools): a
 * full disk is no damage, and a backup restored over it would lose what was written since.
 */
export const FULL_DISK_ADVICE = 'free some space on it and run it again; what the store held before is whole';

/** In the global registry: the CLI's entry and the commands bundle it loads each hold a copy of this module. */
const LEFT_STORED = Symbol.for('codeMemory.leftStored');

/** Notes on a failed write's error what it could not take back (a full disk takes the delete too). */
export function noteLeftStored(error: unknown, note: string): void {
  if (typeof error === 'object' && error !== null) (error as Record<symbol, string>)[LEFT_STORED] = note;
}

/** What a failed write left stored because it could not take it back (noteLeftStored), or null. */
export function leftStored(error: unknown): string | null {
  return (typeof error === 'object' && error !== null ? (error as Record<symbol, string | undefined>)[LEFT_STORED] : undefined) ?? null;
}

/** The advice for a full disk, with what the failed write left stored when it could not take it back. */
export function fullDiskAdvice(error: unknown): string {
  const note = leftStored(error);
  return note ? `${FULL_DISK_ADVICE}, but ${note}` : FULL_DISK_ADVICE;
}

/**
 * A file the newest manifest of a table lists that is not on disk (a data file, a deletion file,
 * an index): Lance says `Not found: <store>/cells.lance/data/<uuid>.lance`. Object stores say
 * NoSuchKey or BlobNotFound instead.
 */
const LOST_FILE = /Not found: [^\n]*?\.lance[\\/](data|_deletions|_indices)[\\/]/i;

/**
 * Whether an error opening or reading a store says its files are damaged (rather than missing
 * rights or credentials, a network, or a full disk). LanceDB 0.31 panics on some damaged files (a
 * garbled bitmap index: "Panic in async function"): a panic of a store read is taken for damage too.
 */
export function looksDamaged(message: string): boolean {
  return (
    (/LanceError\((IO|Corrupt)|NoSuchKey|BlobNotFound|does not have sufficient data|corrupt|invalid (data|manifest)|checksum|unexpected end of file|failed to (read|decode)|Panic in async function|panicked/i.test(message) || LOST_FILE.test(message)) &&
    !looksLikeRights(message) &&
    !looksLikeNetwork(message) &&
    !looksLikeFullDisk(message) &&
    !/NoSuchBucket/.test(message)
  );
}
