// Azure Blob Storage requests of our own, for what Lance does not do for us in an az:// store: its
// lock (objectLock.ts), signed with the credentials Lance finds too (azureCredentials in
// objectStorage.ts).

import { createHmac } from 'node:crypto';
import { objectRequest } from './objectStorage';
import type { AzureCredentials, ObjectAnswer } from './objectStorage';

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
  for (const [k, v] of url.searchParams) params.set(k.toLowerCase(), [...(params.get(k.toLowerCase()) ?? []), v]);
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
