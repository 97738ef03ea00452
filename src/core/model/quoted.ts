// Text a tool quotes inside an answer that has a structure of its own: the item texts in
// recall_context's text pack, the excerpts in retrieve_memory's report. What is quoted came from
// agents, git, import files and teammates (anyone who can write the team bucket), and a line of
// it that reads as a line of the answer (`### XMemo Context`, `Reference: <id> | ...`, an item
// head `[2] ...`, `## Relevant Facts`, a fact `- [99%] **...**`, a rule `---`) forged the
// answer's structure for the agent reading it: a reference to an item that was never found, a
// pack that seemed to end. Such a line is quoted with a backslash before it, as Markdown escapes
// a heading; its words stay.

/** A line start: the text's, or after a line break some reader splits on. */
const LINE_START = String.raw`(^|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029])`;

/**
 * What a line of an answer starts with: a Markdown heading, a label of the text pack's lines
 * (`Items:`, `Budget:`, `Reference:`, `Context:`, its no-match sentence), an item head `[n]`, a
 * fact `- [n%]`, a rule (`---`, `***`, `___`) or the report's closing line.
 */
const STRUCTURE = String.raw`#{1,6}(?=[ \t]|$|[\n\r\u2028\u2029])|(?:Items|Budget|Reference|Context)[ \t]*:|\[\d+\]|No matching XMemo|[-*+][ \t]+\[\d+%\]|(?:-[ \t]*){3,}(?=$|[\n\r\u2028\u2029])|(?:\*[ \t]*){3,}(?=$|[\n\r\u2028\u2029])|(?:_[ \t]*){3,}(?=$|[\n\r\u2028\u2029])|\*Retrieved `;

const STRUCTURE_LINE = new RegExp(`${LINE_START}([ \\t]*)(${STRUCTURE})`, 'giu');

/** `text` with a backslash before each line that would read as a line of the answer quoting it (see STRUCTURE). */
export function quotedLines(text: string): string {
  return text.replace(STRUCTURE_LINE, '$1$2\\$3');
}
