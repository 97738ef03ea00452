// Request guards for the loopback server: DNS-rebinding defence (Host and Origin must be
// loopback), a bearer token compared in constant time, and a bounded request body.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.toLowerCase());
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `Host: 127.0.0.1:<port>` (or localhost / [::1]); anything else is a rebinding attempt. */
export function hostAllowed(hostHeader: string | undefined, port: number): boolean {
  if (!hostHeader) return false;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(hostHeader.trim());
  if (!match) return false;
  if (!isLoopbackHost(match[1])) return false;
  // No port means the scheme's default: only a server on port 80 is named that way.
  return (match[2] === undefined ? 80 : Number(match[2])) === port;
}

/**
 * No Origin (non-browser clients) is fine; a present Origin must be this server's own: a loopback
 * http(s) origin on its port. A page of another local web server (another port) is another origin.
 */
export function originAllowed(originHeader: string | undefined, port: number): boolean {
  if (originHeader === undefined) return true;
  let url: URL;
  try {
    url = new URL(originHeader);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const originPort = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return isLoopbackHost(url.hostname) && originPort === port;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** Constant-time over equal-length digests, so neither content nor length leaks through timing. */
export function tokenMatches(authorization: string | undefined, token: string): boolean {
  if (!authorization) return false;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  const given = match ? match[1] : '';
  const ok = timingSafeEqual(digest(given), digest(token));
  return ok && given.length > 0;
}

export class BodyTooLargeError extends Error {
  /** `declared`: its Content-Length said so, and nothing of it was read. */
  constructor(
    readonly limit: number,
    readonly declared = false,
  ) {
    super(`request body exceeds ${limit} bytes`);
  }
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLargeError(limit, true);
  const chunks: Buffer[] = [];
  let size = 0;
  // Not destroyed when the limit stops the loop: the caller answers 413 and drains the rest
  // (a socket closed with body still arriving is reset, and the client may lose the answer).
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}
