// Lines of a stream with a cap on each line's size, checked while reading: readline would hold a
// line of a gigabyte whole before anyone could look at it.

import { decodeUtf8 } from '../mcp/utf8';

/** A line longer than the cap: `lineNo` is its number (from 1). */
export class LineTooLongError extends Error {
  constructor(
    readonly lineNo: number,
    readonly maxBytes: number,
  ) {
    super(`line ${lineNo} is longer than ${maxBytes} bytes`);
    this.name = 'LineTooLongError';
  }
}

/** A line whose bytes are not UTF-8: `lineNo` is its number (from 1). */
export class LineNotUtf8Error extends Error {
  constructor(readonly lineNo: number) {
    super(`line ${lineNo} is not valid UTF-8`);
    this.name = 'LineNotUtf8Error';
  }
}

/**
 * The lines of `input` (split at \n, a \r before it dropped), decoded as UTF-8. Throws
 * LineTooLongError, and stops reading, as soon as a line passes `maxBytes` bytes, and
 * LineNotUtf8Error at the first line that is not UTF-8.
 */
export async function* boundedLines(input: NodeJS.ReadableStream, maxBytes: number): AsyncGenerator<string> {
  let parts: Buffer[] = [];
  let size = 0;
  let lineNo = 0;
  const line = (tail: Buffer): string => {
    const whole = parts.length === 0 ? tail : Buffer.concat([...parts, tail]);
    parts = [];
    size = 0;
    lineNo++;
    const end = whole.length > 0 && whole[whole.length - 1] === 0x0d ? whole.length - 1 : whole.length;
    // Strict (decodeUtf8): two lines differing only in invalid bytes would otherwise be read as
    // one. A BOM is kept, for the caller to drop where a file may start with one.
    const text = decodeUtf8(whole.subarray(0, end));
    if (text === undefined) throw new LineNotUtf8Error(lineNo);
    return text;
  };
  // Leaving the loop early (a line too long, a bad line the import refused) destroys the stream: reading stops.
  for await (const chunk of input) {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a)) {
      if (size + nl > maxBytes + 1) throw new LineTooLongError(lineNo + 1, maxBytes);
      yield line(buf.subarray(0, nl));
      buf = buf.subarray(nl + 1);
    }
    size += buf.length;
    // One byte over the cap is allowed for the \r of a \r\n line end.
    if (size > maxBytes + 1) throw new LineTooLongError(lineNo + 1, maxBytes);
    if (buf.length > 0) parts.push(buf);
  }
  if (size > 0) yield line(Buffer.alloc(0));
}
