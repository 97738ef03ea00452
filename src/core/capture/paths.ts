// File paths as memory stores them, the same on every OS: workspace-relative, forward slashes.
// A path recorded on Windows (`src\app.ts`) and the same file recorded on Linux must be one
// string, or a filter by file, the graph and near-duplicate detection split one file in two.
// Folders are compared the way the file system compares names: Windows and macOS (by default)
// ignore case, so `C:\Work\App` and `c:\work\app` are one folder there.

import * as path from 'node:path';

/** Whether the platform's default file system ignores the case of names (NTFS, APFS). */
export function caseInsensitiveFileSystem(platform: NodeJS.Platform = process.platform): boolean {
  return platform === 'win32' || platform === 'darwin';
}

/**
 * Any absolute path in one form: a Windows path (`C:\a\b`), a file URI's path (`/c:/a/b`,
 * `/C%3A/a/b` already decoded) or a POSIX path; forward slashes, `.` and `..` resolved, a
 * lower-case drive letter, no trailing slash. UNC paths keep their leading `//`.
 */
export function slashPath(p: string): string {
  let s = p.replace(/\\/g, '/');
  s = s.replace(/^\/([a-zA-Z]:)(\/|$)/, '$1$2');
  s = s.replace(/^([a-zA-Z]):/, (_m, drive: string) => `${drive.toLowerCase()}:`);
  const unc = s.startsWith('//') && !s.startsWith('///');
  s = path.posix.normalize(s);
  if (unc && !s.startsWith('//')) s = `/${s}`;
  if (s.length > 1 && s.endsWith('/') && !/^[a-z]:\/$/.test(s)) s = s.slice(0, -1);
  return s;
}

/**
 * `file` relative to `folder` with forward slashes, or undefined when it is not inside it (or is
 * the folder itself). The result keeps the file's own spelling of the names below the folder.
 */
export function workspaceRelativePath(folder: string, file: string, caseInsensitive = caseInsensitiveFileSystem()): string | undefined {
  const base = slashPath(folder);
  const target = slashPath(file);
  const prefix = base.endsWith('/') ? base : `${base}/`;
  const inside = caseInsensitive ? target.toLowerCase().startsWith(prefix.toLowerCase()) : target.startsWith(prefix);
  if (!inside) return undefined;
  const rel = target.slice(prefix.length);
  return rel === '' ? undefined : rel;
}

/** Whether `child` is `parent` or inside it, compared as the file system would. */
export function isSameOrInside(parent: string, child: string, caseInsensitive = caseInsensitiveFileSystem()): boolean {
  const a = slashPath(parent);
  const b = slashPath(child);
  if (caseInsensitive ? a.toLowerCase() === b.toLowerCase() : a === b) return true;
  return workspaceRelativePath(a, b, caseInsensitive) !== undefined;
}

/**
 * A path an agent, hook or git sent, as stored: forward slashes, no leading `./`, no doubled or
 * trailing slashes. Relative paths stay relative and absolute ones absolute; nothing else changes.
 */
export function storedPath(p: string): string {
  let s = p.trim().replace(/\\/g, '/');
  const unc = s.startsWith('//');
  s = s.replace(/\/{2,}/g, '/');
  if (unc) s = `/${s}`;
  while (s.startsWith('./')) s = s.slice(2);
  if (s.length > 1 && s.endsWith('/')) s = s.slice(0, -1);
  return s;
}
