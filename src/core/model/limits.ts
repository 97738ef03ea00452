// Bounds of what a record holds and of what counts as an answer, shared by the tools, the engine,
// the CLI and the extension's commands (a module of its own: the extension reads them without
// loading a tool's schema library).

/** Characters as the limits count them (code points, as JSON Schema's maxLength does), without spreading a long text into an array. */
export function codePoints(s: string): number {
  return s.length - (s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}

/** The longest title and text of a memory, in characters (code points); the engine refuses longer from any caller. */
export const MAX_MEMORY_TITLE_CHARS = 300;
export const MAX_MEMORY_TEXT_CHARS = 20000;

/**
 * The most file paths one observation or memory lists (files_read, files_modified, files), and the
 * longest path an agent may give. The tools refuse more; the engine keeps the first
 * MAX_RECORD_PATHS of a longer list from any other writer (a git import's commit of a vendored
 * tree, 10,000 files), so that a stored list stays within what an export can be imported back with.
 */
export const MAX_RECORD_PATHS = 500;
export const MAX_PATH_CHARS = 1024;

/**
 * Fused relevance below which a hit is noise (a nearest neighbour that shares nothing with the
 * query): recall_context, retrieve_memory, `code-memory search` and the editor's Search Memory
 * leave such hits out, so that an unrelated query gets "No matching XMemo memory was found." (or
 * "No matches") instead of arbitrary records. recall, a pure nearest-neighbour read, keeps them.
 */
export const MIN_RELEVANCE = 0.05;

/**
 * The hits of a search that count as matches (`MIN_RELEVANCE` and above), in their order: every
 * reader of matches filters through here, retrieve_memory's documents as much as its facts (a
 * search of one type, the project's documents, answered sections that share nothing with the
 * prompt at relevance 0).
 */
export function matches<T extends { score: number }>(hits: readonly T[]): T[] {
  return hits.filter((h) => h.score >= MIN_RELEVANCE);
}
