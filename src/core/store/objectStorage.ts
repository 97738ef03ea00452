// Object storage as a store location (s3://bucket/prefix, gs://, az://): what LanceDB needs to
// reach it, taken from the standard environment and profile files at open and never written
// anywhere by us, and the probe that refuses an endpoint Lance cannot commit to safely.
//
// Lance's commit guard on object storage is a conditional PUT (`If-None-Match: *`) of the next
// manifest version: of two writers committing the same version, one gets 412 and retries on
// top of the other. An S3-compatible endpoint that ignores the header lets both "win" and one
// writer's rows vanish. So before a store on s3:// is used, a probe object is written twice
// under the condition; anything but 412 the second time is refused. GCS and Azure Blob honour
// their conditional creates natively (Lance uses them), so they are not probed.

import { createHash, createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerSecret } from '../capture/redact';

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

/** The store is refused: its endpoint would lose writes, or its credentials are missing. */
export class ObjectStoreRefused extends Error {}

/** The endpoint did not answer (offline, DNS, refused connection): try again later. */
export class ObjectStoreUnreachable extends Error {}

const SCHEMES: Record<string, ObjectScheme> = { 's3:': 's3', 's3a:': 's3', 'gs:': 'gs', 'gcs:': 'gs', 'az:': 'az', 'abfs:': 'az' };

/** A URI or URL as it may be shown: credentials written into it (`scheme://key:secret@host`) replaced. */
export function displayUri(uri: string): string {
  // `key:secret@` (the secret may hold '/', '#', '?' unencoded, as pasted), or anything before an
  // '@' in the bucket's place.
  return uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)(?:[^/@]*@|[^@]*:[^@]*@)/i, '$1***@');
}

/** Parses `s3://bucket/prefix` (gs://, az:// alike); null for anything that is not object storage. */
export function parseObjectLocation(uri: string): ObjectLocation | null {
  // Credentials written into it (`key:secret@bucket`, the secret with any character, '/' '#' '?'
  // included) are refused before anything else reads the URI; an '@' further on is the prefix's.
  const credentials = /^([a-z][a-z0-9+.-]*:)\/\/(?:[^/@]*@|[^@]*:[^@]*@)/i.exec(uri.trim());
  if (credentials && SCHEMES[credentials[1].toLowerCase()]) {
    throw new ObjectStoreRefused(`'${displayUri(uri)}' carries credentials: use ${SCHEMES[credentials[1].toLowerCase()]}://<bucket>/<prefix>, with the keys in the environment or ~/.aws/credentials`);
  }
  const m = /^([a-z][a-z0-9+.-]*:)\/\/([^/?#]*)(\/[^?#]*)?$/i.exec(uri.trim());
  if (!m) return null;
  const scheme = SCHEMES[m[1].toLowerCase()];
  if (!scheme) return null;
  const bucket = m[2];
  if (!/^[a-z0-9][a-z0-9._-]{1,253}$/i.test(bucket)) {
    throw new ObjectStoreRefused(`'${uri}' does not name a bucket: use ${scheme}://<bucket>/<prefix>`);
  }
  const prefix = (m[3] ?? '').split('/').filter(Boolean).join('/');
  return { scheme, bucket, prefix };
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
  const endpoint = settings.endpoint?.trim() || env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || config.endpoint_url || undefined;
  if (endpoint && !/^https?:\/\/[^/\s@]+\/?$/i.test(endpoint)) {
    const why = /^https?:\/\/[^/\s]*@/i.test(endpoint) ? ', without credentials in it (they go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)' : '';
    throw new ObjectStoreRefused(`the S3 endpoint '${displayUri(endpoint)}' is not an http(s)://host[:port] URL${why}`);
  }
  return {
    accessKeyId,
    secretAccessKey,
    sessionToken: (fromEnv ? env.AWS_SESSION_TOKEN : creds.aws_session_token) || undefined,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || config.region || 'us-east-1',
    endpoint: endpoint?.replace(/\/$/, ''),
  };
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
  const sas = pick('azure_storage_sas_key', 'AZURE_STORAGE_SAS_KEY', 'AZURE_STORAGE_SAS_TOKEN')?.replace(/^\?/, '') ?? null;
  if (emulator && !key && !sas) key = EMULATOR_KEY;
  if (!account || (!key && !sas)) return null;
  const given = pick('azure_storage_endpoint', 'AZURE_STORAGE_ENDPOINT');
  const endpoint = given ?? (emulator ? `${env.AZURITE_BLOB_STORAGE_URL ?? 'http://127.0.0.1:10000'}/${account}` : `https://${account}.blob.core.windows.net`);
  return { account, key, sas, endpoint: endpoint.replace(/\/+$/, '') };
}

/**
 * LanceDB storage options for a location. S3 always gets explicit keys and region (else the
 * client probes cloud metadata services and looks the region up online); GCS and Azure read
 * their own environment (GOOGLE_SERVICE_ACCOUNT, AZURE_STORAGE_ACCOUNT_NAME...).
 */
export function objectStorageOptions(location: ObjectLocation, env: NodeJS.ProcessEnv, settings: ObjectStoreSettings = {}): Record<string, string> {
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

// ------------------------------------------------------------------ the conditional PUT probe

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();

const rfc3986 = (x: string): string => encodeURIComponent(x).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function encodeKey(key: string): string {
  return key.split('/').map(rfc3986).join('/');
}

/** What an object storage request answered: its status, its body, and the server's clock and the object's date (ms). */
export interface ObjectAnswer {
  status: number;
  body: string;
  date: number | null;
  lastModified: number | null;
}

/** Sends one request; a request that gets no answer (offline, DNS, refused, timed out) is ObjectStoreUnreachable. */
export async function objectRequest(url: URL, init: { method: string; headers: Record<string, string>; body?: Buffer }, timeoutMs: number): Promise<ObjectAnswer> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new ObjectStoreUnreachable(`${url.origin} did not answer (${cause?.code ?? cause?.message ?? (e as Error).message})`);
  }
  const text = await response.text().catch(() => '');
  const when = (h: string): number | null => {
    const v = response.headers.get(h);
    const t = v ? Date.parse(v) : NaN;
    return Number.isFinite(t) ? t : null;
  };
  return { status: response.status, body: text, date: when('date'), lastModified: when('last-modified') };
}

/** One path-style S3 request signed with AWS Signature Version 4 (`key` '' with `query`: a bucket listing). */
export async function s3Call(c: S3Credentials, method: string, bucket: string, key: string, headers: Record<string, string>, body: Buffer, timeoutMs: number, query: Record<string, string> = {}): Promise<ObjectAnswer> {
  const base = c.endpoint ?? `https://s3.${c.region}.amazonaws.com`;
  const search = Object.keys(query)
    .sort()
    .map((k) => `${rfc3986(k)}=${rfc3986(query[k])}`)
    .join('&');
  const url = new URL(`${base}/${bucket}${key ? `/${encodeKey(key)}` : ''}${search ? `?${search}` : ''}`);
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const all: Record<string, string> = {
    ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    host: url.host,
    'x-amz-content-sha256': sha256(body),
    'x-amz-date': amzDate,
  };
  if (c.sessionToken) all['x-amz-security-token'] = c.sessionToken;
  const names = Object.keys(all).sort();
  const canonical = [method, url.pathname, search, ...names.map((n) => `${n}:${all[n].trim()}`), '', names.join(';'), all['x-amz-content-sha256']].join('\n');
  const scope = `${day}/${c.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${c.secretAccessKey}`, day), c.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(toSign).digest('hex');
  const { host: _host, ...sent } = all;
  void _host;
  const authorization = `AWS4-HMAC-SHA256 Credential=${c.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return objectRequest(url, { method, headers: { ...sent, authorization }, body: method === 'PUT' ? body : undefined }, timeoutMs);
}

/** Answers object stores ask a client to retry (InternalError, SlowDown, ServerBusy, a gateway in between). */
const RETRIED = new Set([429, 500, 502, 503, 504]);
const ATTEMPTS = 4;

/**
 * A request, retried with backoff while the endpoint answers busy, as the AWS and Azure SDKs do
 * (and, with `network`, while it does not answer). Still failing after the last attempt:
 * unreachable for now (try again later), never refused for good.
 */
export async function retried(where: string, network: boolean, call: () => Promise<ObjectAnswer>): Promise<ObjectAnswer> {
  for (let attempt = 1; ; attempt++) {
    let answer: ObjectAnswer | null = null;
    try {
      answer = await call();
    } catch (e) {
      if (!network || !(e instanceof ObjectStoreUnreachable) || attempt === ATTEMPTS) throw e;
    }
    if (answer && !RETRIED.has(answer.status)) return answer;
    if (answer && attempt === ATTEMPTS) throw new ObjectStoreUnreachable(`${where} is busy or failing: HTTP ${answer.status} to ${ATTEMPTS} attempts`);
    await new Promise((r) => setTimeout(r, 100 * 2 ** (attempt - 1) * (1 + Math.random())));
  }
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

/**
 * Writes a probe object twice with `If-None-Match: *` and expects 412 the second time (then
 * deletes it). Throws ObjectStoreRefused for an endpoint that ignores the condition, a missing
 * bucket or rejected credentials, ObjectStoreUnreachable when it does not answer or stays busy
 * (5xx, 429) through its retries.
 */
export async function probeConditionalPut(uri: string, storageOptions: Record<string, string>, timeoutMs = 5000): Promise<void> {
  const location = parseObjectLocation(uri);
  if (!location || location.scheme !== 's3') return;
  const c = credentialsOf(storageOptions);
  const key = [location.prefix, `.code-memory-probe-${randomUUID()}`].filter(Boolean).join('/');
  const body = Buffer.from('code-memory conditional PUT probe\n');
  const where = `${uri} (${c.endpoint ?? `s3.${c.region}.amazonaws.com`})`;
  const { status: first } = await retried(where, false, () => s3Call(c, 'PUT', location.bucket, key, { 'if-none-match': '*' }, body, timeoutMs));
  if (first === 403 || first === 401) throw new ObjectStoreRefused(`${where} refused the credentials (HTTP ${first}): check the access key, secret and region`);
  if (first === 404) throw new ObjectStoreRefused(`${where}: bucket '${location.bucket}' does not exist (HTTP 404)`);
  if (first < 200 || first >= 300) throw new ObjectStoreRefused(`${where} could not write a probe object (HTTP ${first})`);
  try {
    const { status: second } = await retried(where, false, () => s3Call(c, 'PUT', location.bucket, key, { 'if-none-match': '*' }, body, timeoutMs));
    if (second !== 412) {
      throw new ObjectStoreRefused(
        `${where} ignores conditional PUT (If-None-Match: * on an existing object answered HTTP ${second}, not 412). ` +
          "Two writers would overwrite each other's commits and lose memories, so this store is not used. " +
          'Use AWS S3, or an S3-compatible server that supports conditional writes (a recent MinIO, Ceph RGW, Cloudflare R2).',
      );
    }
  } finally {
    await s3Call(c, 'DELETE', location.bucket, key, {}, Buffer.alloc(0), timeoutMs).catch(() => undefined);
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
  const options = given ?? objectStorageOptions(location, env, settings);
  // The keys this process holds are redacted from anything it stores or shares, whatever their shape.
  for (const key of ['aws_secret_access_key', 'aws_session_token', 'secret_access_key', 'session_token', 'google_service_account_key', 'azure_storage_account_key']) {
    if (options[key]) registerSecret(options[key]);
  }
  // Lance reads an az:// store's key or SAS from the environment: they are this process's secrets too.
  const azure = location.scheme === 'az' ? azureCredentials(env, options) : null;
  for (const secret of [azure?.key, azure?.sas]) if (secret) registerSecret(secret);
  await probeConditionalPut(uri, options);
  return options;
}
