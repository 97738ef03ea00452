// Requests of our own to object storage, for what Lance does not do for us: the probe at open
// (objectStorage.ts) and the store's lock (objectLock.ts). S3 requests are signed with AWS
// Signature Version 4, Azure Blob requests with Shared Key (or carry a SAS), with the credentials
// Lance is given (objectStorage.ts reads them).

import { addToList } from '../lists';
import { createHash, createHmac } from 'node:crypto';
import type { AzureCredentials, S3Credentials } from './objectStorage';

/** The store is refused: its endpoint would lose writes, or its credentials are missing. */
export class ObjectStoreRefused extends Error {}

/** The endpoint did not answer (offline, DNS, refused connection): try again later. */
export class ObjectStoreUnreachable extends Error {
  /** Nothing came back within the request's time: sent again, it would wait as long again. */
  timedOut = false;
}

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
    if ((e as Error)?.name === 'TimeoutError') {
      const silent = new ObjectStoreUnreachable(`${url.origin} did not answer (no answer to a ${init.method} within ${timeoutMs / 1000} s)`);
      silent.timedOut = true;
      throw silent;
    }
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
 * unreachable for now (try again later), never refused for good. A request that timed out is
 * not sent again (as Lance's are not, see requestBounds in objectStorage.ts): an endpoint that
 * takes connections and never answers would hold the caller for every attempt's full timeout.
 */
export async function retried(where: string, network: boolean, call: () => Promise<ObjectAnswer>): Promise<ObjectAnswer> {
  for (let attempt = 1; ; attempt++) {
    let answer: ObjectAnswer | null = null;
    try {
      answer = await call();
    } catch (e) {
      if (!network || !(e instanceof ObjectStoreUnreachable) || e.timedOut || attempt === ATTEMPTS) throw e;
    }
    if (answer && !RETRIED.has(answer.status)) return answer;
    if (answer && attempt === ATTEMPTS) throw new ObjectStoreUnreachable(`${where} is busy or failing: HTTP ${answer.status} to ${ATTEMPTS} attempts`);
    await new Promise((r) => setTimeout(r, 100 * 2 ** (attempt - 1) * (1 + Math.random())));
  }
}

/** One request to a bucket or container (`key` '' with `query`: a request on the bucket itself). */
export type ObjectSend = (method: string, key: string, headers: Record<string, string>, body: Buffer, query: Record<string, string>) => Promise<ObjectAnswer>;

/** How a service lists keys a page at a time: the query for a page, the keys in an answer, the next page's token. */
export interface Listing {
  query(prefix: string, token: string | undefined): Record<string, string>;
  keys: RegExp;
  next(body: string): string | undefined;
}

export const S3_LISTING: Listing = {
  query: (prefix, token) => ({ 'list-type': '2', prefix, ...(token ? { 'continuation-token': token } : {}) }),
  keys: /<Key>([^<]*)<\/Key>/g,
  next: (body) => (/<IsTruncated>true<\/IsTruncated>/.test(body) ? /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(body)?.[1] : undefined),
};

export const AZURE_LISTING: Listing = {
  query: (prefix, token) => ({ restype: 'container', comp: 'list', prefix, ...(token ? { marker: token } : {}) }),
  keys: /<Name>([^<]*)<\/Name>/g,
  next: (body) => /<NextMarker>([^<]+)<\/NextMarker>/.exec(body)?.[1],
};

const API_VERSION = '2021-08-06';

/**
 * One Blob service request, signed with Shared Key (or carrying the SAS): `key` '' with `query`
 * is a request on the container (a listing, or its creation). PUTs of a key write block blobs.
 */
export async function azureCall(
  c: AzureCredentials,
  method: string,
  container: string,
  key: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
  query: Record<string, string> = {},
): Promise<ObjectAnswer> {
  const path = `/${container}${key ? `/${key.split('/').map(encodeURIComponent).join('/')}` : ''}`;
  const url = new URL(`${c.endpoint}${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  if (c.sas) for (const [k, v] of new URLSearchParams(c.sas)) url.searchParams.set(k, v);
  const all: Record<string, string> = {
    ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    'x-ms-date': new Date().toUTCString(),
    'x-ms-version': API_VERSION,
  };
  if (method === 'PUT' && key) all['x-ms-blob-type'] = 'BlockBlob';
  if (c.key) all.authorization = `SharedKey ${c.account}:${sharedKeySignature(c.account, c.key, method, url, all, method === 'PUT' ? body.length : 0)}`;
  return objectRequest(url, { method, headers: all, body: method === 'PUT' ? body : undefined }, timeoutMs);
}

/** The Shared Key signature of a request (Azure Storage's "Authorize with Shared Key"). */
function sharedKeySignature(account: string, key: string, method: string, url: URL, headers: Record<string, string>, length: number): string {
  const h = (name: string): string => headers[name] ?? '';
  const msHeaders = Object.keys(headers)
    .filter((n) => n.startsWith('x-ms-'))
    .sort()
    .map((n) => `${n}:${headers[n].trim()}\n`)
    .join('');
  const params = new Map<string, string[]>();
  for (const [k, v] of url.searchParams) addToList(params, k.toLowerCase(), v);
  const resource =
    `/${account}${url.pathname}` +
    [...params.keys()]
      .sort()
      .map((k) => `\n${k}:${params.get(k)!.sort().join(',')}`)
      .join('');
  const toSign = [
    method,
    h('content-encoding'),
    h('content-language'),
    length > 0 ? String(length) : '',
    h('content-md5'),
    h('content-type'),
    '', // Date: x-ms-date is sent instead
    h('if-modified-since'),
    h('if-match'),
    h('if-none-match'),
    h('if-unmodified-since'),
    h('range'),
    msHeaders + resource,
  ].join('\n');
  return createHmac('sha256', Buffer.from(key, 'base64')).update(toSign, 'utf8').digest('base64');
}
