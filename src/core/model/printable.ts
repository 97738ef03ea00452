// Text as an agent or a terminal shows it. What is stored came from agents, git and files, and a
// report can carry terminal control sequences (a colour, a title change, a carriage return that
// writes over a line, backspaces): shown raw, they hide or fake what the memory says. Every read of
// a search cell (what the tools print) goes through `printable`.
/* eslint-disable no-control-regex -- control characters are what these patterns find */

/** Escape sequences (CSI, OSC, and single-character ones), 7-bit and 8-bit. */
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|(?:\u001b\]|\u009d)[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[@-Z\\-_]/g;
/** Control characters but the tab and the line feed (a carriage return ends a line: see below). */
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const ANY = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** `text` without terminal escape sequences and control characters; line breaks (CR LF, a lone CR) become LF. */
export function printable(text: string): string {
  if (!ANY.test(text)) return text;
  return text.replace(ESCAPES, '').replace(/\r\n?/g, '\n').replace(CONTROLS, '');
}

/**
 * `text` without terminal escape sequences and control characters, its line breaks (CR too) kept
 * as they are: what `printable` will show of it, line for line (see capture/redact.ts, which
 * redacts what a reader is shown).
 */
export function withoutEscapes(text: string): string {
  if (!ANY.test(text)) return text;
  return text.replace(ESCAPES, '').replace(CONTROLS, '');
}
