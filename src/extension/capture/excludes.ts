// Exclude globs, compiled once per settings change so that the check in an event handler is a
// few regex tests. Supports *, **, ?, {a,b} and [...] like VS Code's own glob settings; a
// pattern without a slash matches the file name in any folder, as in .gitignore.

/**
 * Never captured unless the user changes codeMemory.capture.exclude (the default in package.json,
 * which a test holds equal to this list). Only names that are secret by isSecretPath
 * (core/capture/redact.ts): a document such as .envrc.md or source such as id_utils.ts is captured.
 * Capture checks isSecretPath as well, so the spellings no glob can tell apart (.envrc, .env_local,
 * prod.env, id_deploy) stay out whatever this list says.
 */
export const DEFAULT_EXCLUDES = [
  '**/.env',
  '**/.env.*',
  '**/.envrc',
  '**/*.pem',
  '**/*.key',
  '**/id_{rsa,dsa,ecdsa,ed25519}{,_sk}{,.pub}',
  '**/secrets/**',
];

export class ExcludeMatcher {
  private readonly regexes: RegExp[];

  constructor(readonly patterns: readonly string[]) {
    this.regexes = patterns.filter((p) => p.trim() !== '').map((p) => globToRegExp(p.trim()));
  }

  /** `relativePath` uses forward slashes, relative to the workspace folder. */
  isExcluded(relativePath: string): boolean {
    for (const re of this.regexes) if (re.test(relativePath)) return true;
    return false;
  }
}

export function globToRegExp(glob: string): RegExp {
  let pattern = glob.replace(/\\/g, '/');
  if (pattern.startsWith('./')) pattern = pattern.slice(2);
  if (!pattern.includes('/')) pattern = `**/${pattern}`;
  if (pattern.endsWith('/')) pattern += '**';
  let re = '';
  let inGroup = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '*') {
      if (pattern[i + 1] === '*') {
        // '**/' matches zero or more folders; a trailing '**' matches everything below.
        const slash = pattern[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else {
        re += '[^/]*';
      }
    } else if (ch === '?') {
      re += '[^/]';
    } else if (ch === '{') {
      inGroup = true;
      re += '(?:';
    } else if (ch === '}' && inGroup) {
      inGroup = false;
      re += ')';
    } else if (ch === ',' && inGroup) {
      re += '|';
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end === -1) {
        re += '\\[';
      } else {
        re += `[${pattern.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else {
      re += ch.replace(/[.+^$()|\\]/g, '\\$&');
    }
  }
  // A folder pattern also excludes what is inside it.
  return new RegExp(`^${re}(?:/.*)?$`);
}
