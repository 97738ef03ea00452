// Bounds of what a record holds, shared by the tools' schemas, the engine and the extension's
// commands (a module of its own: the extension reads them without loading a tool's schema library).

/** The longest title and text of a memory, in characters (code points); the engine refuses longer from any caller. */
export const MAX_MEMORY_TITLE_CHARS = 300;
export const MAX_MEMORY_TEXT_CHARS = 20000;
