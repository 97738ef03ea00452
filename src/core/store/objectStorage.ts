// Object storage as a store location (s3://bucket/prefix, gs://, az://): what LanceDB needs to
// reach it, taken from the standard environment and profile files at open and never written
// anywhere by us, and the probe that refuses an endpoint Lance cannot commit to safely.
//
// Lance's commit guard on object storage is a conditional PUT (`If-None-Match: *`) of the next
// manifest version: of two writers committing the same version, one gets 412 and retries on
// top of the other. An S3-compatible endpoint that ignores the header lets both "win" and one
// writer's rows vanish. So before a store on s3:// is used, a probe object is written twice
// under the condition; anything but 412 the second time is refused. Azure Blob honours the
// condition natively; its probe (409 the second time) tells refused credentials, a missing
// container and an endpoint that does not answer from a damaged store before Lance is asked.
// GCS is not probed.
//
// Every request to the store is bounded (requestBounds): an endpoint that takes connections and
// then never answers fails a call in about half a minute instead of holding it for many minutes.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerSecret } from '../capture/redact';
import { AZURE_LISTING, ObjectStoreRefused, ObjectStoreUnreachable, S3_LISTING, azureCall, retried, s3Call } from './objectRequests';
import type { Listing, ObjectAnswer, ObjectSend } from './objectRequests';

export type ObjectScheme = 's3' | 'gs' | 'az';

export interface ObjectLocation {
  scheme: ObjectScheme;
  bucket: string;
  /** Key prefix without leading or trailing slash ('' for the bucket's root). */
  prefix: string;
}

export interface ObjectStoreSettings {
  /** An S3-compatible endpoint (MinIO, Ceph, R2...): the `codeMemory.store.endpoint` setting. */
  endpoint?: string;
}

export { ObjectStoreRefused, ObjectStoreUnreachable } from './objectRequests';

const SCHEMES: Record<string, ObjectScheme> = { 's3:': 's3', 's3a:': 's3', 'gs:': 'gs', 'gcs:': 'gs', 'az:': 'az', 'abfs:': 'az' };

/** A URI or URL as it may be shown: credentials written into it (`scheme://key:secret@host`) replaced. */
export function displayUri(uri: string): string {
  // `key:secret@` (the secret may hold '/', '#', '?' unencoded, as pasted), or anything before an
  // '@' in the bucket's place; a query or fragment (`?aws_secret_access_key=...`), after the '?'
  // or '#' it was given with, so that the message shows the URI as typed.
  return uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)(?:[^/@]*@|[^@]*:[^@]*@)/i, '$1***@').replace(/^([a-z][a-z0-9+.-]*:\/\/[^?#]*)([?#]).*$/is, '$1$2***');
}

/** Parses `s3://bucket/prefix` (gs://, az:// alike); null for anything that is not object storage. */
export function parseObjectLocation(uri: string): ObjectLocation | null {
  // Credentials written into it (`key:secret@bucket`, the secret with any character, '/' '#' '?'
  // included) are refused before anything else reads the URI; an '@' further on is the prefix's.
  const credentials = /^([a-z][a-z0-9+.-]*:)\/\/(?:[^/@]*@|[^@]*:[^@]*@)/i.exec(uri.trim());
  if (credentials && SCHEMES[credentials[1].toLowerCase()]) {
    throw new ObjectStoreRefused(`'${displayUri(uri)}' carries credentials: use ${SCHEMES[credentials[1].toLowerCase()]}://<bucket>/<prefix>, with the keys in the environment or ~/.aws/credentials`);
  }
  const m = /^([a-z][a-z0-9+.-]*:)\/\/([^/?#]*)(\/[^?#]*)?([?#].*)?$/is.exec(uri.trim());
  if (!m) return null;
  const scheme = SCHEMES[m[1].toLowerCase()];
  if (!scheme) return null;
  // Options (and keys) come from the environment and settings, never from the URI: one with a
  // query would otherwise be taken for a folder path.
  if (m[4]) throw new ObjectStoreRefused(`'${displayUri(uri)}' has a query or fragment: use ${scheme}://<bucket>/<prefix>, with the keys and options in the environment or settings`);
  const bucket = m[2];
  if (!/^[a-z0-9][a-z0-9._-]{1,253}$/i.test(bucket)) {
    throw new ObjectStoreRefused(`'${uri}' does not name a bucket: use ${scheme}://<bucket>/<prefix>`);
  }
  // The prefix as Lance writes its keys: the URI's path as a URL holds it (a space is `%20`, `ü`
  // is `%C3%BC`), so that our own requests (the lock, the listings a forget reads) meet its objects.
  const prefix = urlPath(m[3] ?? '').split('/').filter(Boolean).join('/');
  return { scheme, bucket, prefix };
}

/** A URI's path percent-encoded as a URL parser (Lance's included) keeps it. */
function urlPath(raw: string): string {
  try {
    return new URL(`s3://bucket${raw}`).pathname;
  } catch {
    return raw;
  }
}

/** An object storage URI as its bucket and prefix name it (`s3://b//p/` is `s3://b/p`); anything else unchanged. */
export function canonicalObjectUri(uri: string): string {
  const location = parseObjectLocation(uri);
  return location ? `${location.scheme}://${location.bucket}${location.prefix ? `/${location.prefix}` : ''}` : uri;
}

interface Profile {
  [key: string]: string;
}

/** Sections of an INI file such as ~/.aws/credentials; missing or unreadable: none. */
function readIni(file: string): Map<string, Profile> {
  const out = new Map<string, Profile>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return out;
  }
  let current: Profile | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/[#;].*$/, '').trim();
    if (!line) continue;
    const section = /^\[\s*(.+?)\s*\]$/.exec(line);
    if (section) {
      current = {};
      out.set(section[1].replace(/^profile\s+/, ''), current);
      continue;
    }
    const kv = /^([^=]+?)\s*=\s*(.*)$/.exec(line);
    if (kv && current) current[kv[1].toLowerCase()] = kv[2];
  }
  return out;
}

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  endpoint?: string;
}

/**
 * S3 credentials, region and endpoint as the AWS tools find them: the environment first
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION / AWS_DEFAULT_REGION,
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL), then the profile (AWS_PROFILE, else default) of
 * ~/.aws/credentials and ~/.aws/config (or AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE).
 */
export function s3Credentials(env: NodeJS.ProcessEnv, settings: ObjectStoreSettings = {}): S3Credentials {
  const home = env.HOME || os.homedir();
  const profileName = env.AWS_PROFILE || env.AWS_DEFAULT_PROFILE || 'default';
  const creds = readIni(env.AWS_SHARED_CREDENTIALS_FILE || path.join(home, '.aws', 'credentials')).get(profileName) ?? {};
  const config = readIni(env.AWS_CONFIG_FILE || path.join(home, '.aws', 'config')).get(profileName) ?? {};
  const fromEnv = Boolean(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY);
  const accessKeyId = fromEnv ? env.AWS_ACCESS_KEY_ID : creds.aws_access_key_id;
  const secretAccessKey = fromEnv ? env.AWS_SECRET_ACCESS_KEY : creds.aws_secret_access_key;
  if (!accessKeyId || !secretAccessKey) {
    throw new ObjectStoreRefused(
      `no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put them in profile '${profileName}' of ~/.aws/credentials (AWS_PROFILE picks another)`,
    );
  }
  const sessionToken = (fromEnv ? env.AWS_SESSION_TOKEN : creds.aws_session_token) || undefined;
  // Keys this process holds are redacted from anything it stores or shares, also when the store
  // is then refused for its settings (shares wait in the queue meanwhile, and go once they are fixed).
  for (const secret of [secretAccessKey, sessionToken]) if (secret) registerSecret(secret);
  const endpoint = s3Endpoint(env, settings, () => config);
  if (endpoint && (!/^https?:\/\/[^/\s@]+\/?$/i.test(endpoint) || !URL.canParse(endpoint))) {
    const why = /^https?:\/\/[^/\s]*@/i.test(endpoint) ? ', without credentials in it (they go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)' : '';
    throw new ObjectStoreRefused(`the S3 endpoint '${displayUri(endpoint)}' is not an http(s)://host[:port] URL${why}`);
  }
  return {
    accessKeyId,
    secretAccessKey,
    sessionToken,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || config.region || 'us-east-1',
    // The scheme in lower case: Lance allows plain http only for an endpoint spelled `http://`.
    endpoint: endpoint?.replace(/\/$/, '').replace(/^https?:/i, (scheme) => scheme.toLowerCase()),
  };
}

/** The S3 endpoint as the AWS tools pick it (unchecked): the setting, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url. */
function s3Endpoint(env: NodeJS.ProcessEnv, settings: ObjectStoreSettings, profileConfig: () => Record<string, string>): string | undefined {
  return settings.endpoint?.trim() || env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || profileConfig().endpoint_url || undefined;
}

/** The Blob service URL of an Azure account when no endpoint is given: Azurite's names the account. */
function azureServiceUrl(env: NodeJS.ProcessEnv, account: string, emulator: boolean): string {
  return emulator ? `${env.AZURITE_BLOB_STORAGE_URL ?? 'http://127.0.0.1:10000'}/${account}` : `https://${account}.blob.core.windows.net`;
}

/**
 * The server an object store location's requests go to, as one string however it is spelled
 * (`HTTP://Minio:9000/` is `http://minio:9000`): the S3 endpoint (the setting, AWS_ENDPOINT_URL_S3,
 * AWS_ENDPOINT_URL, the profile's endpoint_url, as s3Credentials picks it), an az:// store's Blob
 * service URL (which names its account), gs://'s endpoint setting; '' for the scheme's default (AWS
 * S3, GCS). Reads no credentials and never throws: a bucket and prefix name one store only
 * together with it (a local state folder kept for a store is keyed by both).
 */
export function objectEndpointKey(uri: string, env: NodeJS.ProcessEnv = process.env, settings: ObjectStoreSettings = {}): string {
  let location: ObjectLocation | null;
  try {
    location = parseObjectLocation(uri);
  } catch {
    return '';
  }
  if (!location) return '';
  let endpoint: string | undefined = settings.endpoint?.trim() || undefined;
  if (location.scheme === 's3') {
    const profileName = env.AWS_PROFILE || env.AWS_DEFAULT_PROFILE || 'default';
    endpoint = s3Endpoint(env, settings, () => readIni(env.AWS_CONFIG_FILE || path.join(env.HOME || os.homedir(), '.aws', 'config')).get(profileName) ?? {});
  } else if (location.scheme === 'az') {
    endpoint ||= env.AZURE_STORAGE_ENDPOINT?.trim() || undefined;
    if (!endpoint) {
      const emulator = /^(1|true)$/i.test(env.AZURE_STORAGE_USE_EMULATOR ?? '');
      const account = env.AZURE_STORAGE_ACCOUNT_NAME || (emulator ? EMULATOR_ACCOUNT : undefined);
      if (account) endpoint = azureServiceUrl(env, account, emulator);
    }
  }
  if (!endpoint) return '';
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return endpoint.replace(/\/+$/, '');
  }
}

/** Azurite's account, the same in every installation (its documentation's). */
const EMULATOR_ACCOUNT = 'devstoreaccount1';
const EMULATOR_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface AzureCredentials {
  account: string;
  /** Base64 account key (Shared Key), or null with a SAS. */
  key: string | null;
  /** A SAS token's query (without '?'), or null with a key. */
  sas: string | null;
  /** The blob service's URL, without the container: `https://<account>.blob.core.windows.net`. */
  endpoint: string;
}

/**
 * Azure credentials for our own requests to an az:// store (its lock), read as Lance reads them
 * (Rust's object_store), from the store's storage options first, then the environment:
 * AZURE_STORAGE_ACCOUNT_NAME, and AZURE_STORAGE_ACCOUNT_KEY (or _ACCESS_KEY, _MASTER_KEY) for
 * Shared Key, or AZURE_STORAGE_SAS_KEY (or _SAS_TOKEN) for a SAS; AZURE_STORAGE_ENDPOINT for
 * another endpoint; AZURE_STORAGE_USE_EMULATOR=true for Azurite (at AZURITE_BLOB_STORAGE_URL,
 * else http://127.0.0.1:10000, with its well-known account and key). Null with another sign-in
 * (a service principal, a managed identity), which Lance reads and we do not.
 */
export function azureCredentials(env: NodeJS.ProcessEnv, options: Record<string, string> = {}): AzureCredentials | null {
  const pick = (option: string, ...names: string[]): string | undefined => options[option] || names.map((n) => env[n]).find((v) => v);
  const emulator = /^(1|true)$/i.test(pick('azure_storage_use_emulator', 'AZURE_STORAGE_USE_EMULATOR') ?? '');
  const account = pick('azure_storage_account_name', 'AZURE_STORAGE_ACCOUNT_NAME') ?? (emulator ? EMULATOR_ACCOUNT : undefined);
  let key = pick('azure_storage_account_key', 'AZURE_STORAGE_ACCOUNT_KEY', 'AZURE_STORAGE_ACCESS_KEY', 'AZURE_STORAGE_MASTER_KEY') ?? null;
  // A key wins over a SAS, as in object_store: one of the two is used.
  const sas = key ? null : (pick('azure_storage_sas_key', 'AZURE_STORAGE_SAS_KEY', 'AZURE_STORAGE_SAS_TOKEN')?.replace(/^\?/, '') ?? null);
  if (emulator && !key && !sas) key = EMULATOR_KEY;
  if (!account || (!key && !sas)) return null;
  // Registered before the endpoint is checked, as s3Credentials does.
  for (const secret of [key, sas]) if (secret) registerSecret(secret);
  const given = pick('azure_storage_endpoint', 'AZURE_STORAGE_ENDPOINT')?.trim();
  // An endpoint is a service URL, a path allowed (Azurite's names the account); a query (a pasted
  // SAS URL) or credentials in it would be printed in messages and are refused.
  if (given && !/^https?:\/\/[^/\s@?#]+(\/[^\s?#@]*)?$/i.test(given)) {
    throw new ObjectStoreRefused(`the Azure endpoint '${displayUri(given.replace(/[?#].*$/, '?…'))}' is not an http(s)://host[:port][/path] URL (a SAS goes in AZURE_STORAGE_SAS_TOKEN)`);
  }
  const endpoint = given ?? azureServiceUrl(env, account, emulator);
  return { account, key, sas, endpoint: endpoint.replace(/\/+$/, '').replace(/^https?:/i, (scheme) => scheme.toLowerCase()) };
}

/** Seconds one request to object storage may take by default (CODE_MEMORY_STORE_TIMEOUT sets another). */
export const OBJECT_REQUEST_TIMEOUT_S = 10;

/**
 * Storage options that bound every request Lance makes to the store, given with the credentials
 * to every connection of it (readers, writers, the upkeep child). Without them a request that
 * gets no answer waited 30 s, was sent again up to three times (about 120 s), was then taken for
 * throttling by Lance's AIMD layer and sent again three more times, and a listing of a table's
 * versions (every read's check for the latest one) is retried 5 times by Lance on top of that, a
 * number no option changes: a read of a black-holed endpoint waited for many minutes.
 *
 * So: `timeout` bounds one request (its whole exchange, body included) and `connect_timeout` its
 * connection; `client_retry_timeout` (seconds) stops object_store from sending a request again
 * once that much time went by, so a request that got no answer is not repeated while a quick
 * failure (a busy answer, a reset) still is; `lance_aimd_max_retries` 0 turns off the AIMD
 * layer's retries (it reads any error that went through retries as throttling). A listing that
 * gets no answer then fails after its six tries, about 6 x the timeout (32 s measured with 5 s,
 * about a minute with the default 10 s). The timeout is for whole requests: an upload link slower
 * than about 4 Mbit/s needs more for Lance's 5 MB upload parts (CODE_MEMORY_STORE_TIMEOUT, in
 * seconds), and a shorter one fails a black hole sooner.
 */
export function requestBounds(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const raw = env.CODE_MEMORY_STORE_TIMEOUT?.trim();
  const given = Number(raw);
  // A value that says nothing would leave the default in force unnoticed.
  // So would one that rounds to no time at all (a bound of 0 ms fails every request at once).
  if (raw && !(Number.isFinite(given) && Math.round(given * 1000) >= 1)) throw new ObjectStoreRefused(`CODE_MEMORY_STORE_TIMEOUT must be a number of seconds greater than 0 (at least 0.001), not '${raw.slice(0, 40)}'`);
  const seconds = raw ? given : OBJECT_REQUEST_TIMEOUT_S;
  const ms = `${Math.round(seconds * 1000)}ms`;
  return { timeout: ms, connect_timeout: ms, client_retry_timeout: String(Math.max(1, Math.round(seconds))), lance_aimd_max_retries: '0' };
}

/** The request bound in storage options (see requestBounds), in ms; null without one. */
export function requestTimeoutMs(options: Record<string, string>): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/.exec(options.timeout ?? '');
  if (!m) return null;
  return Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
}

/**
 * LanceDB storage options for a location. S3 always gets explicit keys and region (else the
 * client probes cloud metadata services and looks the region up online); Azure with a key or SAS
 * gets them explicitly too (Lance keeps the first Azure credentials a process used when it reads
 * them from the environment itself); GCS, and Azure through another sign-in, read their own
 * environment (GOOGLE_SERVICE_ACCOUNT, AZURE_CLIENT_ID...).
 */
export function objectStorageOptions(location: ObjectLocation, env: NodeJS.ProcessEnv, settings: ObjectStoreSettings = {}): Record<string, string> {
  if (location.scheme === 'az') return azureStorageOptions(env, settings);
  if (location.scheme !== 's3') return settings.endpoint ? { endpoint: settings.endpoint } : {};
  const c = s3Credentials(env, settings);
  const options: Record<string, string> = {
    aws_access_key_id: c.accessKeyId,
    aws_secret_access_key: c.secretAccessKey,
    region: c.region,
  };
  if (c.sessionToken) options.aws_session_token = c.sessionToken;
  if (c.endpoint) {
    options.endpoint = c.endpoint;
    if (c.endpoint.startsWith('http://')) options.allow_http = 'true';
  }
  return options;
}

/**
 * An az:// store's options for Lance: the account, its key or SAS, and the endpoint, when we can
 * read them. The endpoint already names the emulator when there is one, so the emulator is
 * turned off for Lance: in emulator mode it takes Azurite's address from the environment as the
 * process first saw it, and a store opened after another Azurite's went to the first one's.
 */
function azureStorageOptions(env: NodeJS.ProcessEnv, settings: ObjectStoreSettings): Record<string, string> {
  const c = azureCredentials(env, settings.endpoint ? { azure_storage_endpoint: settings.endpoint } : {});
  if (!c) return settings.endpoint ? { endpoint: settings.endpoint } : {};
  const options: Record<string, string> = { azure_storage_account_name: c.account, azure_storage_endpoint: c.endpoint, azure_storage_use_emulator: 'false' };
  if (c.key) options.azure_storage_account_key = c.key;
  else if (c.sas) options.azure_storage_sas_key = c.sas;
  if (c.endpoint.startsWith('http://')) options.allow_http = 'true';
  return options;
}

export function credentialsOf(options: Record<string, string>): S3Credentials {
  return {
    accessKeyId: options.aws_access_key_id ?? '',
    secretAccessKey: options.aws_secret_access_key ?? '',
    sessionToken: options.aws_session_token,
    region: options.region ?? 'us-east-1',
    endpoint: options.endpoint,
  };
}

/** Our own requests to a store's bucket or container, signed with the credentials Lance is given. */
export interface ObjectClient {
  /** The service's address, as messages name it. */
  endpoint: string;
  send: ObjectSend;
  listing: Listing;
  /** What to check when the service refuses the credentials. */
  credentials: string;
}

/** A client for the store at `location`: S3, or Azure Blob with a key or SAS; null elsewhere (gs://, Azure through another sign-in). Requests wait `wantedMs` at most, and no longer than the options' request bound. */
export function objectClient(location: ObjectLocation, storageOptions: Record<string, string>, wantedMs: number): ObjectClient | null {
  const { bucket } = location;
  // Our own requests (the probe, the lock, the deletions listing) wait no longer than Lance's.
  const bound = requestTimeoutMs(storageOptions);
  const timeoutMs = bound === null ? wantedMs : Math.min(wantedMs, bound);
  if (location.scheme === 's3') {
    const c = credentialsOf(storageOptions);
    return {
      endpoint: c.endpoint ?? `s3.${c.region}.amazonaws.com`,
      send: (method, key, headers, body, query) => s3Call(c, method, bucket, key, headers, body, timeoutMs, query),
      listing: S3_LISTING,
      credentials: 'check the access key, secret and region',
    };
  }
  const c = location.scheme === 'az' ? azureCredentials({}, storageOptions) : null;
  if (!c) return null;
  return {
    endpoint: c.endpoint,
    send: (method, key, headers, body, query) => azureCall(c, method, bucket, key, headers, body, timeoutMs, query),
    listing: AZURE_LISTING,
    credentials: `check the account name (${c.account}) and its ${c.key ? 'key (AZURE_STORAGE_ACCOUNT_KEY)' : 'SAS (AZURE_STORAGE_SAS_TOKEN)'}`,
  };
}

/** Every key under `prefix` (ending with '/'), page after page; each request retried on busy answers and network errors. */
export async function listKeys(where: string, send: ObjectSend, listing: Listing, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const listed = await retried(where, true, () => send('GET', '', {}, Buffer.alloc(0), listing.query(prefix, token)));
    if (listed.status !== 200) throw new ObjectStoreUnreachable(`could not list ${where}: HTTP ${listed.status}`);
    for (const m of listed.body.matchAll(listing.keys)) keys.push(m[1]);
    token = listing.next(listed.body);
  } while (token);
  return keys;
}

/** What the probe says of each kind of object storage it probes. */
const PROBED: Partial<Record<ObjectScheme, { bucketWord: string; existing: number[]; advice: string }>> = {
  s3: { bucketWord: 'bucket', existing: [412], advice: 'Use AWS S3, or an S3-compatible server that supports conditional writes (a recent MinIO, Ceph RGW, Cloudflare R2).' },
  // Azure answers 409 (BlobAlreadyExists) to a create of an existing blob.
  az: { bucketWord: 'container', existing: [409, 412], advice: 'Use Azure Blob Storage or Azurite.' },
};

/**
 * Writes a probe object twice with `If-None-Match: *` and expects the second to be refused
 * (S3: 412; Azure Blob: 409), then deletes it. Throws ObjectStoreRefused for an endpoint that
 * ignores the condition, a missing bucket or container, or rejected credentials,
 * ObjectStoreUnreachable when it does not answer within `timeoutMs` or stays busy (5xx, 429)
 * through its retries. An az:// store reached through another sign-in than a key or SAS is not
 * probed (Lance alone reads those credentials).
 */
export async function probeConditionalPut(uri: string, storageOptions: Record<string, string>, timeoutMs = 5000): Promise<void> {
  const location = parseObjectLocation(uri);
  const client = location ? objectClient(location, storageOptions, timeoutMs) : null;
  const kind = location ? PROBED[location.scheme] : undefined;
  if (!location || !client || !kind) return;
  const where = `${uri} (${client.endpoint})`;
  const send = (method: string, headers: Record<string, string>, body: Buffer): Promise<ObjectAnswer> => client.send(method, key, headers, body, {});
  const key = [location.prefix, `.code-memory-probe-${randomUUID()}`].filter(Boolean).join('/');
  const body = Buffer.from('code-memory conditional PUT probe\n');
  const create = (): Promise<ObjectAnswer> => retried(where, false, () => send('PUT', { 'if-none-match': '*' }, body));
  try {
    const { status: first } = await create();
    if (first === 403 || first === 401) throw new ObjectStoreRefused(`${where} refused the credentials (HTTP ${first}): ${client.credentials}`);
    if (first === 404) throw new ObjectStoreRefused(`${where}: ${kind.bucketWord} '${location.bucket}' does not exist (HTTP 404)`);
    // The key is new: an object there already is our own create, retried after a busy answer
    // that came once it had been written.
    if ((first < 200 || first >= 300) && !kind.existing.includes(first)) throw new ObjectStoreRefused(`${where} could not write a probe object (HTTP ${first})`);
    const { status: second } = await create();
    if (!kind.existing.includes(second)) {
      throw new ObjectStoreRefused(
        `${where} ignores conditional PUT (If-None-Match: * on an existing object answered HTTP ${second}, not ${kind.existing.join(' or ')}). ` +
          "Two writers would overwrite each other's commits and lose memories, so this store is not used. " +
          kind.advice,
      );
    }
  } finally {
    await send('DELETE', {}, Buffer.alloc(0)).catch(() => undefined);
  }
}

/**
 * What Store.open needs for a location that is not a local folder: the storage options (given,
 * else from the environment) once the endpoint passed the probe. Other URIs (db:// for LanceDB
 * Cloud) get the given options unchanged.
 */
export async function openObjectStorage(
  uri: string,
  given: Record<string, string> | undefined,
  env: NodeJS.ProcessEnv = process.env,
  settings: ObjectStoreSettings = {},
): Promise<Record<string, string> | undefined> {
  const location = parseObjectLocation(uri);
  if (!location) return given;
  // Every connection to the store gets the request bounds; options given explicitly win. The
  // credentials are read (and their keys registered, see s3Credentials) before the bounds are
  // checked: a bound refused as written leaves the keys in the environment all the same.
  const stored = given ?? objectStorageOptions(location, env, settings);
  const options = { ...requestBounds(env), ...stored };
  // The keys this process holds are redacted from anything it stores or shares, whatever their shape.
  for (const key of ['aws_secret_access_key', 'aws_session_token', 'secret_access_key', 'session_token', 'google_service_account_key', 'azure_storage_account_key']) {
    if (options[key]) registerSecret(options[key]);
  }
  // An az:// store's key or SAS, also when Lance takes it from the environment (given options without it).
  const azure = location.scheme === 'az' ? azureCredentials(env, options) : null;
  for (const secret of [azure?.key, azure?.sas]) if (secret) registerSecret(secret);
  await probeConditionalPut(uri, options, requestTimeoutMs(options) ?? undefined);
  return options;
}
