// A local file's text as the editor shows it: decoded with the document's own encoding (VS Code
// opens a Latin-1 or Shift JIS file with that encoding, and saves it so), without a byte order
// mark. Read synchronously in an editor's change handler, so that the text is the file before
// the change; decoded at once where Node knows the encoding, else by VS Code, a moment later.

import * as fs from 'node:fs';
import * as vscode from 'vscode';

/** VS Code's encoding ids that are not a WHATWG label as they are (TextDecoder takes labels). */
const LABELS: Record<string, string> = {
  utf8: 'utf-8',
  utf8bom: 'utf-8',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
  macroman: 'macintosh',
  cp866: 'ibm866',
  koi8r: 'koi8-r',
  koi8u: 'koi8-u',
  gbk: 'gbk',
  gb2312: 'gbk',
  gb18030: 'gb18030',
  big5hkscs: 'big5',
  shiftjis: 'shift_jis',
  eucjp: 'euc-jp',
  euckr: 'euc-kr',
};

/**
 * The TextDecoder label of a VS Code encoding id, undefined where there is none that decodes as
 * VS Code does (DOS code pages, KOI8-RU and -T, ISO-8859-16: VS Code decodes those itself).
 */
export function decoderLabel(encoding: string): string | undefined {
  if (LABELS[encoding]) return LABELS[encoding];
  const windows = /^windows(\d{3,4})$/.exec(encoding);
  if (windows) return `windows-${windows[1]}`;
  const iso = /^iso8859(\d{1,2})$/.exec(encoding);
  // ISO-8859-16 has no WHATWG decoder; the others do.
  if (iso && iso[1] !== '16') return `iso-8859-${iso[1]}`;
  return undefined;
}

/** The document's encoding where the host tells it (VS Code 1.101 and later), else undefined. */
export function encodingOf(document: vscode.TextDocument | undefined): string | undefined {
  const encoding = (document as { encoding?: unknown } | undefined)?.encoding;
  return typeof encoding === 'string' && encoding !== '' ? encoding : undefined;
}

/** Binary content (a NUL byte, which no text in a single or multi byte encoding has): no text. UTF-16 has them. */
function isBinary(bytes: Uint8Array, encoding: string | undefined): boolean {
  return !encoding?.startsWith('utf16') && bytes.includes(0);
}

function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * `bytes` decoded as `encoding` (default UTF-8) here and now; undefined where Node has no decoder
 * for it. ISO-8859-1 is decoded as itself: WHATWG's decoder for its label is windows-1252's.
 */
export function decodeNow(bytes: Uint8Array, encoding = 'utf8'): string | undefined {
  if (encoding === 'iso88591') return withoutBom(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
  const label = decoderLabel(encoding);
  if (!label) return undefined;
  try {
    return withoutBom(new TextDecoder(label).decode(bytes));
  } catch {
    // A runtime without that decoder (Node built without full ICU).
    return undefined;
  }
}

/** `bytes` decoded by VS Code in `encoding`; undefined where this host cannot (before 1.100). */
function decodeByHost(bytes: Uint8Array, encoding: string): Thenable<string> | undefined {
  const decode = (vscode.workspace as { decode?: typeof vscode.workspace.decode }).decode;
  if (typeof decode !== 'function') return undefined;
  try {
    return decode(bytes, { encoding });
  } catch {
    return undefined;
  }
}

/**
 * Decoded text that is not the file's as the editor shows it: replacement characters the editor's
 * text does not have (a file in another encoding than the one it was decoded with).
 */
function misdecoded(text: string, document: vscode.TextDocument | undefined): boolean {
  return document !== undefined && text.includes('\uFFFD') && !document.getText().includes('\uFFFD');
}

/**
 * The text of the local file at `fsPath` as `document` shows it, read now: a string; null where
 * it has none (binary, or not in the document's encoding); a promise of it where only VS Code can
 * decode the encoding (`later`; else null). Throws where the file cannot be read.
 */
export function readFileText(fsPath: string, document?: vscode.TextDocument, later = true): string | null | Promise<string | null> {
  const bytes = fs.readFileSync(fsPath);
  const encoding = encodingOf(document);
  if (isBinary(bytes, encoding)) return null;
  const text = decodeNow(bytes, encoding);
  if (text !== undefined) return misdecoded(text, document) ? null : text;
  // No encoding told (a host before 1.101) is UTF-8, which decodes here.
  const decoding = later && encoding !== undefined ? decodeByHost(bytes, encoding) : undefined;
  if (!decoding) return null;
  return Promise.resolve(decoding).then(
    (decoded) => (misdecoded(withoutBom(decoded), document) ? null : withoutBom(decoded)),
    // VS Code throws for binary content.
    () => null,
  );
}
