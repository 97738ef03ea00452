// The first failing test in a test run's output: its name and the first line of its message.
// Knows the report formats of mocha, node:test (spec and TAP), jest and vitest, pytest, go test
// and cargo test. Reads only the bounded tail the capture keeps; returns null when it sees none.
// Names and messages are redacted before they are cut (a token the cut fell inside would no longer
// look like one), and again where the observation is prepared.

import { redactClipped } from './redact';

/** The tail of a command's output kept for finding the first failing test (characters). */
export const OUTPUT_TAIL = 32_000;

/**
 * The last `chars` characters of a command's output, from a line's start: the part of a line a cut
 * falls inside is left out (a token or a password cut there would no longer look like one to
 * redaction); in output of one long line, from the first space after the cut.
 */
export function outputTail(text: string, chars = OUTPUT_TAIL): string {
  if (text.length <= chars) return text;
  const cut = text.length - chars;
  if (/\s/.test(text[cut - 1])) return text.slice(cut);
  const lineStart = text.indexOf('\n', cut);
  if (lineStart >= 0 && text.slice(lineStart + 1).trim() !== '') return text.slice(lineStart + 1);
  // The cut falls in the last line (a long one-line report): from its first space after the cut.
  const space = text.slice(cut).search(/\s/);
  return space < 0 || cut + space + 1 >= text.length ? '' : text.slice(cut + space + 1);
}

export interface TestFailure {
  name: string;
  message: string | null;
}

// Terminal colour and title sequences, which test reporters print around names.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007/g;
const MAX = 300;

/** Trimmed, redacted whole, then cut to MAX characters (never inside a [REDACTED] marker). */
function clip(s: string): string {
  return redactClipped(s.trim(), MAX, '…');
}

/** The first non-blank line at or after `from` that reads like an error message. */
function messageAfter(lines: string[], from: number, stop: (line: string) => boolean = () => false): string | null {
  for (let i = from; i < Math.min(lines.length, from + 15); i++) {
    const t = lines[i].trim();
    if (i > from && stop(lines[i])) break;
    if (!t || /^(at |\+ expected|- actual|at Context|Error Stack|stack:|---|\.\.\.|duration_ms|location:|failureType:)/i.test(t)) continue;
    return clip(t.replace(/^(error|message):\s*/i, '').replace(/^['"]|['"]$/g, ''));
  }
  return null;
}

export function firstFailingTest(output: string | null | undefined): TestFailure | null {
  if (!output) return null;
  const lines = output.replace(ANSI, '').replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m: RegExpExecArray | null;
    // pytest: FAILED tests/test_a.py::test_name - AssertionError: assert 1 == 2
    if ((m = /^FAILED\s+(\S+::\S+)(?:\s+-\s+(.*))?$/.exec(line.trim()))) return { name: m[1], message: m[2] ? clip(m[2]) : null };
    // go test: --- FAIL: TestName (0.00s), then the message indented
    if ((m = /^\s*--- FAIL: (\S+)/.exec(line))) return { name: m[1], message: messageAfter(lines, i + 1, (l) => /^\s*(--- |FAIL|ok\s)/.test(l)) };
    // cargo test: ---- tests::name stdout ----, then "thread '...' panicked at ...:" and the message
    if ((m = /^---- (\S+) stdout ----$/.exec(line.trim()))) {
      const panic = lines.slice(i + 1, i + 6).findIndex((l) => /panicked at/.test(l));
      return { name: m[1], message: panic >= 0 ? messageAfter(lines, i + 2 + panic) : messageAfter(lines, i + 1) };
    }
    // jest: ● Suite › test name
    if ((m = /^\s*● (.+ › .+|[^●]+)$/.exec(line)) && !/Console$/.test(m[1].trim())) return { name: clip(m[1]), message: messageAfter(lines, i + 1) };
    // vitest: FAIL  file.test.ts > suite > test
    if ((m = /^\s*(?:FAIL|×|✗)\s+(\S+\s+>\s+.+)$/.exec(line))) return { name: clip(m[1].replace(/\s+\d+ms$/, '')), message: messageAfter(lines, i + 1) };
    // mocha's failure list: "  1) suite" then the test title ending in ":" and the error.
    if ((m = /^\s*1\) (.+)$/.exec(line)) && /^\s*\d+ failing/m.test(lines.slice(Math.max(0, i - 3), i).join('\n'))) {
      const title: string[] = [m[1].trim()];
      let j = i + 1;
      while (j < lines.length && lines[j].trim() && !/^\s*(\w*Error|Error)\b/.test(lines[j])) {
        title.push(lines[j].trim().replace(/:$/, ''));
        if (lines[j].trim().endsWith(':')) break;
        j++;
      }
      return { name: clip(title.join(' ').replace(/:$/, '')), message: messageAfter(lines, j + 1) };
    }
    // node:test TAP: not ok 1 - name
    if ((m = /^\s*not ok \d+ - (.+?)(?:\s+#.*)?$/.exec(line))) {
      const err = lines.slice(i + 1, i + 20).find((l) => /^\s*error:/.test(l));
      return { name: clip(m[1]), message: err ? clip(err.trim().replace(/^error:\s*/, '').replace(/^['"|>-]+\s*|['"]$/g, '')) || null : null };
    }
    // node:test spec reporter: ✖ name (1.2ms), then the error indented. The summary repeats it.
    if ((m = /^\s*✖ (.+?)(?: \([\d.]+m?s\))?$/.exec(line)) && !/^failing tests:?$/i.test(m[1])) return { name: clip(m[1]), message: messageAfter(lines, i + 1, (l) => /^\s*[✖✔▶ℹ]/.test(l)) };
  }
  return null;
}
