// Strict UTF-8 for what clients send (HTTP request bodies, stdio message lines).

/**
 * Refuses what is not UTF-8 rather than replacing it: Buffer#toString('utf8') turns every invalid
 * sequence into U+FFFD, so two dedupe keys, session ids or titles that differ only in invalid
 * bytes would reach the store as one. A leading BOM is kept (ignoreBOM), as Buffer#toString keeps
 * it: valid input decodes exactly as it did before, and JSON.parse still refuses a BOM.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of `bytes`, or undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
