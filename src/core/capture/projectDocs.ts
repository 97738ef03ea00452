// The project's own documents as memory: README, docs/, changelogs and decision records, cut
// into sections at their headings, and the doc comments of the code's symbols (Python
// docstrings, JSDoc blocks) at one revision. They explain the project's terms in everyday
// words, so a question that describes a behaviour finds the term its commits use through them
// (see retrieve/hybrid.ts, document expansion). Read straight from git objects, so a bare
// clone or a checkout at another revision gives the same documents.

import { append } from '../lists';
import { createHash } from 'node:crypto';
import type { ObservationInput } from '../api';
import { isSkippedFile } from '../retrieve/diffText';
import { isObjectId } from './git';
import { runGit, spawnGit } from './gitProcess';
import { isSecretPath, redact } from './redact';
import { codePointCut, cutText } from '../tokens';

import { DOCUMENT_TYPE, DOC_QUOTE_CHARS } from '../model/records';

/** One section of a document, or one symbol's doc comment. */
export interface ProjectDocument {
  path: string;
  /** Heading path ("Guide > Sessions") or qualified symbol name ("Flask.teardown_request"). */
  title: string;
  text: string;
}

export interface ProjectDocsLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxSections: number;
  maxSectionChars: number;
}

export const DEFAULT_DOCS_LIMITS: ProjectDocsLimits = { maxFiles: 3000, maxFileBytes: 400_000, maxSections: 8000, maxSectionChars: 1500 };

const DOC_EXT = /\.(md|markdown|rst|txt|adoc)$/i;
const DOC_NAME = /(^|\/)(readme|changes|changelog|history|news|contributing|upgrading|migration|architecture)([._-][^/]*)?$/i;
const DOC_DIR = /(^|\/)(docs?|documentation|adrs?|decisions|rfcs?|guides?)\//i;
const CODE_EXT = /\.(py|pyi|js|mjs|cjs|jsx|ts|mts|cts|tsx)$/i;
const NOT_OURS = /(^|\/)(node_modules|vendor|third_party|dist|build|out|coverage|\.git|site-packages|__pycache__)\//i;
const TEST_PATH = /(^|\/)(tests?|spec|__tests__|testsuite|fixtures?|examples?)\/|[._-](test|spec)\.[a-z]+$|(^|\/)test_[^/]*\.py$/i;
const LICENSE = /(^|\/)(licen[cs]e|copying|authors|notice)([._-][^/]*)?$/i;

/** Whether a path is one of the project's documents (prose). */
export function isDocumentPath(p: string): boolean {
  if (NOT_OURS.test(p) || LICENSE.test(p) || isSkippedFile(p) || isSecretPath(p)) return false;
  if (!DOC_EXT.test(p) && !DOC_NAME.test(p)) return false;
  return DOC_NAME.test(p) || DOC_DIR.test(p) || !p.includes('/');
}

/** Whether a path is source code whose doc comments are read. */
export function isDocumentedCodePath(p: string): boolean {
  return CODE_EXT.test(p) && !NOT_OURS.test(p) && !TEST_PATH.test(p) && !isSkippedFile(p) && !isSecretPath(p) && !/\.min\.|\.d\.ts$/i.test(p);
}

/** Cuts a long text into pieces of at most `max` characters at paragraph, then line, boundaries. */
function pieces(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const out: string[] = [];
  let cur = '';
  for (const para of text.split(/\n\s*\n/)) {
    const p = para.trim();
    if (!p) continue;
    if (cur && cur.length + p.length + 2 > max) {
      out.push(cur);
      cur = '';
    }
    if (p.length > max) {
      for (let i = 0; i < p.length; ) {
        // Never between the two halves of a surrogate pair (see codePointCut).
        const end = Math.max(codePointCut(p, i + max), i + 2);
        out.push(p.slice(i, end));
        i = end;
      }
      continue;
    }
    cur = cur ? `${cur}\n\n${p}` : p;
  }
  if (cur) out.push(cur);
  return out;
}

const RST_UNDERLINE = /^([=\-~^"'`#*+:.])\1{2,}\s*$/;

/**
 * Sections of a Markdown or reStructuredText file, each titled by its heading path. Headings and
 * sections are redacted before they are cut, so no cut leaves a piece of a secret that no
 * longer looks like one.
 */
export function documentSections(path: string, content: string, maxChars = DEFAULT_DOCS_LIMITS.maxSectionChars): ProjectDocument[] {
  const lines = content.replace(/\r\n?/g, '\n').split('\n');
  const base = path.split('/').pop() ?? path;
  const out: ProjectDocument[] = [];
  const headings: Array<{ level: number; text: string }> = [];
  const rstLevels: string[] = [];
  let body: string[] = [];
  const flush = (): void => {
    const text = redact(body.join('\n')).trim();
    body = [];
    if (text.replace(/[^\p{L}\p{N}]/gu, '').length < 30) return;
    const title = headings.length ? headings.map((h) => h.text).join(' > ') : base;
    for (const piece of pieces(text, maxChars)) out.push({ path, title, text: piece });
  };
  const open = (level: number, text: string): void => {
    flush();
    while (headings.length && headings[headings.length - 1].level >= level) headings.pop();
    headings.push({ level, text: cutText(redact(text).replace(/[`*_]/g, '').trim(), 120) });
  };
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    // Inside a fenced code block a '#' starts a comment, not a heading.
    const f = /^\s*(```|~~~)/.exec(line);
    if (f && (fence === null || fence === f[1])) fence = fence === null ? f[1] : null;
    if (fence !== null || f) {
      body.push(line);
      continue;
    }
    const md = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (md) {
      open(md[1].length, md[2]);
      continue;
    }
    const next = lines[i + 1];
    const u = next !== undefined ? RST_UNDERLINE.exec(next) : null;
    if (u && line.trim() && !RST_UNDERLINE.test(line) && next.trim().length >= line.trim().length) {
      // An overline of the same character makes a different level in reStructuredText.
      const over = i > 0 && RST_UNDERLINE.test(lines[i - 1]) ? `${u[1]}${u[1]}` : u[1];
      if (over.length === 2 && body.length) body.pop();
      let level = rstLevels.indexOf(over);
      if (level < 0) level = rstLevels.push(over) - 1;
      open(level + 1, line);
      i++;
      continue;
    }
    body.push(line);
  }
  flush();
  return out;
}

function cleanComment(lines: string[]): string {
  return lines
    .map((l) => l.replace(/^\s*\/?\*+\/?\s?/, '').replace(/\*\/\s*$/, ''))
    .join('\n')
    .trim();
}

/**
 * Doc comments of a source file's symbols: Python docstrings and JSDoc blocks, titled by the
 * symbol. Each comment is redacted before it is cut (see documentSections).
 */
export function symbolDocs(path: string, content: string, maxChars = DEFAULT_DOCS_LIMITS.maxSectionChars): ProjectDocument[] {
  const lines = content.replace(/\r\n?/g, '\n').split('\n');
  const out: ProjectDocument[] = [];
  const push = (title: string, text: string): void => {
    if (text.replace(/[^\p{L}\p{N}]/gu, '').length < 20) return;
    out.push({ path, title, text: cutText(redact(text), maxChars) });
  };
  if (/\.pyi?$/i.test(path)) {
    const classes: Array<{ indent: number; name: string }> = [];
    for (let i = 0; i < lines.length; i++) {
      const def = /^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)/.exec(lines[i]);
      if (!def) continue;
      const indent = def[1].length;
      while (classes.length && classes[classes.length - 1].indent >= indent) classes.pop();
      const name = [...classes.map((c) => c.name), def[3]].join('.');
      if (def[2] === 'class') classes.push({ indent, name: def[3] });
      // The signature may span lines; the docstring is the first statement after its colon.
      let j = i;
      while (j < lines.length && j < i + 30 && !/:\s*(#.*)?$/.test(lines[j])) j++;
      const first = lines[j + 1]?.trim() ?? '';
      const q = /^[rRuU]?("""|''')/.exec(first);
      if (!q) continue;
      const doc: string[] = [];
      let rest = first.slice(q[0].length);
      for (let k = j + 1; k < lines.length && k < j + 200; k++) {
        const end = rest.indexOf(q[1]);
        if (end >= 0) {
          doc.push(rest.slice(0, end));
          break;
        }
        doc.push(rest);
        rest = lines[k + 1] ?? '';
      }
      push(name, doc.join('\n').replace(/^\s+/gm, '').trim());
    }
    return out;
  }
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\/\*\*/.test(lines[i])) continue;
    const start = i;
    while (i < lines.length && !/\*\//.test(lines[i])) i++;
    const comment = cleanComment(lines.slice(start, i + 1));
    const decl = lines.slice(i + 1, i + 3).join(' ');
    const m =
      /\b(?:function\*?|class|interface|type|enum|const|let|var)\s+([A-Za-z_$][\w$]*)/.exec(decl) ??
      /^\s*(?:(?:public|private|protected|static|async|readonly|get|set|export|default)\s+)*([A-Za-z_$][\w$]*)\s*[(:=<]/.exec(decl);
    if (m) push(m[1], comment);
  }
  return out;
}

/** A file of the tree at one revision: its path, the id of its blob and its size in bytes. */
interface TreeFile {
  path: string;
  oid: string;
  size: number;
}

interface Blob {
  path: string;
  content: string;
}

/**
 * Reads the files' blobs with one `git cat-file --batch`, skipping binary or oversized ones (the
 * caller leaves out files the tree lists as oversized, so no large blob is asked for).
 * Blobs are asked for by object id and each reply is matched by the id in its header: a path,
 * whatever characters it holds, is never part of the request.
 */
async function readBlobs(repoPath: string, files: TreeFile[], maxBytes: number): Promise<Blob[]> {
  const child = spawnGit(repoPath, ['cat-file', '--batch'], 'pipe');
  child.stderr.resume();
  const chunks: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  const oids = [...new Set(files.map((f) => f.oid))];
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(oids.map((o) => `${o}\n`).join(''));
  await done;
  const all = Buffer.concat(chunks);
  const contents = new Map<string, string>();
  let at = 0;
  for (let i = 0; i < oids.length; i++) {
    const nl = all.indexOf(10, at);
    if (nl < 0) break;
    const header = all.subarray(at, nl).toString('utf8');
    at = nl + 1;
    const m = /^(\S+) (\w+) (\d+)$/.exec(header);
    if (!m) continue; // "<oid> missing"
    const size = Number(m[3]);
    const bytes = all.subarray(at, at + size);
    at += size + 1;
    if (m[2] !== 'blob' || size > maxBytes || bytes.includes(0)) continue;
    contents.set(m[1], bytes.toString('utf8'));
  }
  const out: Blob[] = [];
  for (const f of files) {
    const content = contents.get(f.oid);
    if (content !== undefined) out.push({ path: f.path, content });
  }
  return out;
}

/**
 * The regular files of the tree at `rev` with their sizes, from `git ls-tree -r -l -z`
 * (NUL-separated, so a name may hold any character). Only modes 100644 and 100755: a symbolic
 * link's blob is the path it points to, not a document. Names with control characters are left
 * out: no document is named that way.
 */
async function treeFiles(repoPath: string, rev: string): Promise<TreeFile[]> {
  const listing = await runGit(repoPath, ['ls-tree', '-r', '-l', '-z', '--end-of-options', rev]);
  const out: TreeFile[] = [];
  for (const entry of listing.split('\0')) {
    const m = /^100(?:644|755) blob ([0-9a-f]+) +(\d+)\t(.*)$/s.exec(entry);
    if (m && isObjectId(m[1]) && !/\p{Cc}/u.test(m[3])) out.push({ path: m[3], oid: m[1], size: Number(m[2]) });
  }
  return out;
}

/** The project's documents at `rev`: document sections first, then the symbols' doc comments. */
export async function readProjectDocuments(repoPath: string, rev = 'HEAD', limits: ProjectDocsLimits = DEFAULT_DOCS_LIMITS): Promise<ProjectDocument[]> {
  // Sizes come with the listing: a blob over maxFileBytes (a 4 GB README) is never read.
  const files = (await treeFiles(repoPath, rev)).filter((f) => f.size <= limits.maxFileBytes);
  const docs = files.filter((f) => isDocumentPath(f.path));
  const code = files.filter((f) => !isDocumentPath(f.path) && isDocumentedCodePath(f.path));
  const chosen = [...docs, ...code].slice(0, limits.maxFiles);
  const out: ProjectDocument[] = [];
  for (let i = 0; i < chosen.length && out.length < limits.maxSections; i += 200) {
    for (const blob of await readBlobs(repoPath, chosen.slice(i, i + 200), limits.maxFileBytes)) {
      const found = isDocumentPath(blob.path) ? documentSections(blob.path, blob.content, limits.maxSectionChars) : symbolDocs(blob.path, blob.content, limits.maxSectionChars);
      append(out, found);
    }
  }
  return out.slice(0, limits.maxSections);
}

/** Doc comments of the code's symbols by name, to index a commit with the documentation of what it touches. */
export class SymbolDocs {
  private readonly byName = new Map<string, string>();

  constructor(documents: ProjectDocument[], private readonly perCommit = 3, private readonly chars = DOC_QUOTE_CHARS) {
    for (const d of documents) {
      if (!isDocumentedCodePath(d.path)) continue;
      const name = d.title.split('.').pop() ?? d.title;
      // Names too short or too common to say which symbol is meant are left out; an overridden
      // method keeps its first doc comment.
      if (name.length < 4 || /^__\w+__$/.test(name) || this.byName.has(name)) continue;
      this.byName.set(name, cutText(d.text, chars));
    }
  }

  /** The doc comments of the first `perCommit` documented names among `names` (most touched first). */
  textFor(names: string[]): string {
    const out: string[] = [];
    for (const n of names) {
      const text = this.byName.get(n);
      if (text) out.push(text);
      if (out.length >= this.perCommit) break;
    }
    return out.join('\n');
  }
}

/** The observation stored for one document section; its key changes when its text does. */
export function documentObservation(d: ProjectDocument, sessionId: string, createdAtEpoch: number): ObservationInput {
  const hash = createHash('sha1').update(`${d.path}\n${d.title}\n${d.text}`).digest('hex').slice(0, 16);
  return {
    type: DOCUMENT_TYPE,
    title: d.title === d.path.split('/').pop() ? d.path : `${d.title} (${d.path})`,
    narrative: d.text,
    files_read: [d.path],
    memory_session_id: sessionId,
    created_at_epoch: createdAtEpoch,
    dedupe_key: `doc:${hash}`,
  };
}
