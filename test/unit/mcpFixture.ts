// Shared set-up for the tool, MCP and CLI tests: a real engine on a real LanceDB store in a
// temp folder, and a real git repository with a few commits.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MemoryEngineApi } from '../../src/core/api';
import { HashedEmbedder } from '../../src/core/embed/hashed';
import { MemoryEngine } from '../../src/core/engine';
import * as assert from 'node:assert/strict';
import type { Memory, Scope } from '../../src/core/model/records';
import type { ToolContext } from '../../src/core/tools/types';

process.env.LANCEDB_LOG ??= 'error';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `cm-${prefix}-`));
}

/** Temporary folders a test suite makes (`make`) or is handed (`keep`), all removed by `removeAll` (in its `after`). */
export function tempDirs(): { make(prefix: string): string; keep(dir: string): string; removeAll(): void } {
  const dirs: string[] = [];
  const keep = (dir: string): string => (dirs.push(dir), dir);
  return { make: (prefix) => keep(tempDir(prefix)), keep, removeAll: () => dirs.splice(0).forEach(removeDir) };
}

/** Scopes of a new project each call (`<prefix>-1`, `-2`, ...): project-wide and on branches one and two. */
export function branchScopes(prefix: string): () => { all: Scope; one: Scope; two: Scope } {
  let n = 0;
  return () => {
    const project = `${prefix}-${++n}`;
    return { all: { project }, one: { project, branch: 'one' }, two: { project, branch: 'two' } };
  };
}

export async function openTestEngine(dir = tempDir('store')): Promise<{ engine: MemoryEngine; dir: string }> {
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: new HashedEmbedder(), maintenanceIntervalMs: 0 });
  return { engine, dir };
}

/** A new project scope per call, `github.com/acme/<name>-<n>`: tests sharing one engine stay apart. */
export function scopeMaker(name: string): () => Scope {
  let n = 0;
  return () => ({ project: `github.com/acme/${name}-${++n}` });
}

/** A memory as stored, superseded or not; fails the test when the scope does not hold it. */
export async function storedMemory(engine: MemoryEngineApi, scope: Scope, id: number): Promise<Memory> {
  const [m] = await engine.getMemories([id], scope, { includeSuppressed: true });
  assert.ok(m, `memory ${id}`);
  return m;
}

export function toolContext(engine: MemoryEngineApi, scope: Scope, extra: Partial<ToolContext> = {}): ToolContext {
  return { engine, scope, transportSessionId: 'test-session', ...extra };
}

/** A few observations and a memory, in one project, plus one observation in another project. */
export async function seed(engine: MemoryEngineApi, scope: Scope, other: Scope): Promise<{ observationIds: number[]; memoryId: number; otherId: number }> {
  const stored = await engine.observe(
    [
      { type: 'edit', title: 'Switched the vector store to LanceDB', narrative: 'We replaced the SQLite vector extension with LanceDB because it runs embedded and supports object storage.', files_modified: ['src/core/store/store.ts'], branch: 'main', commit_sha: 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0' },
      { type: 'edit', title: 'Token budgets use the o200k tokenizer', narrative: 'recall_context counts tokens with gpt-tokenizer instead of characters divided by four.', files_modified: ['src/core/tokens.ts'] },
      { type: 'read', title: 'Read the retry policy of the HTTP client', narrative: 'Exponential backoff with jitter, at most five attempts.', files_read: ['src/net/retry.ts'] },
    ],
    scope,
  );
  const memory = await engine.remember({ title: 'Decision: embedded LanceDB is the vector store', text: 'The team decided to keep all memory in an embedded LanceDB store on the user disk.', memory_type: 'decision' }, scope);
  const [foreign] = await engine.observe([{ type: 'edit', title: 'Secret plans of another project about LanceDB', narrative: 'This must never be visible from the test project.' }], other);
  await engine.flush();
  return { observationIds: stored.map((o) => o.id), memoryId: memory.id, otherId: foreign.id };
}

function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, ...env } });
}

export interface TestRepo {
  dir: string;
  shas: Record<string, string>;
}

/** A repository with three commits whose messages and diffs the questions in the tests paraphrase. */
export function makeGitRepo(): TestRepo {
  const dir = tempDir('repo');
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['config', 'user.email', 'dev@example.com']);
  git(dir, ['config', 'user.name', 'Dev Example']);
  git(dir, ['config', 'commit.gpgsign', 'false']);
  const shas: Record<string, string> = {};
  const commit = (key: string, files: Record<string, string>, message: string, when: string): void => {
    for (const [file, body] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), body);
    }
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', message], { GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when });
    shas[key] = git(dir, ['rev-parse', 'HEAD']).trim();
  };
  commit('parser', { 'src/parser/csvParser.ts': 'export function parseCsvLine(line: string) {\n  return line.split(",");\n}\n' }, 'Add a CSV line parser for the import wizard', '2026-01-05T10:00:00Z');
  commit('retry', { 'src/net/retryPolicy.ts': 'export const maxAttempts = 5;\nexport function backoffDelay(attempt: number) {\n  return 2 ** attempt * 100;\n}\n' }, 'Retry failed uploads with exponential backoff', '2026-01-05T11:00:00Z');
  commit('darkmode', { 'src/ui/theme.css': ':root { --background: #111; }\n', 'src/ui/themeToggle.ts': 'export function toggleDarkMode() {}\n' }, 'Dark mode toggle in the settings page', '2026-01-09T09:00:00Z');
  return { dir, shas };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
