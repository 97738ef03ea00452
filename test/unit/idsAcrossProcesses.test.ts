// Record ids stay unique in the store whatever several writer processes of several projects do
// at once, also when the id counter file is garbled while another process holds a block.
import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { MemoryEngine } from '../../src/core/engine';
import { RECORD_TABLES } from '../../src/core/store/schema';

process.env.LANCEDB_LOG ??= 'error';
const WRITER = path.join(__dirname, 'fixtures', 'idsWriter.ts');
const CLI = path.join(__dirname, '..', '..', 'dist', 'cli.js');

function spawnWriter(dir: string, mode: string, tag: string, projects: string[], rounds: number): { child: ChildProcess; next: () => Promise<string>; lines: string[] } {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', WRITER, dir, mode, tag, projects.join(','), String(rounds)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, LANCEDB_LOG: 'error' },
    cwd: path.join(__dirname, '..', '..'),
  });
  let err = '';
  child.stderr?.on('data', (d) => (err += String(d)));
  child.on('exit', (code) => {
    if (code) process.stderr.write(`writer ${tag} exit ${code}: ${err}\n`);
  });
  const lines: string[] = [];
  const it = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const { value, done } = await it.next();
    if (done) throw new Error(`writer ${tag} ended: ${err}`);
    lines.push(value);
    return value;
  };
  return { child, next, lines };
}

async function readUntil(w: { next: () => Promise<string> }, end: string): Promise<Array<{ p: string; ids: number[] }>> {
  const out: Array<{ p: string; ids: number[] }> = [];
  for (;;) {
    const line = await w.next();
    if (line === end) return out;
    if (line.startsWith('{')) out.push(JSON.parse(line));
  }
}

function cli(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { env: { ...process.env, LANCEDB_LOG: 'error', CODE_MEMORY_EMBEDDER: 'none' }, maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as NodeJS.ErrnoException & { code?: number }).code as unknown as number) ?? 1 : 0, stdout, stderr });
    });
    if (input !== undefined) {
      child.stdin?.end(input);
    }
  });
}

async function duplicateIds(dir: string): Promise<Record<string, number[]>> {
  const engine = await MemoryEngine.open({ storeUri: dir, embedder: 'none', maintenanceIntervalMs: 0 });
  try {
    const dups: Record<string, number[]> = {};
    for (const table of RECORD_TABLES) {
      const seen = new Map<number, number>();
      for (const r of await engine.store.rows(table, null, { select: ['id'] })) seen.set(Number(r.id), (seen.get(Number(r.id)) ?? 0) + 1);
      const d = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
      if (d.length > 0) dups[table] = d.slice(0, 20);
    }
    return dups;
  } finally {
    await engine.close();
  }
}

describe('ids across processes and projects', function () {
  this.timeout(300_000);
  let dir: string;
  const children: ChildProcess[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ids-processes-'));
  });
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(`${dir}.go-h`, { force: true });
  });

  it('ids.next holding garbage while another process holds a block: no id repeats', async () => {
    const holder = spawnWriter(dir, 'hold', 'h', ['p/a'], 3);
    children.push(holder.child);
    const first = await readUntil(holder, 'claimed');
    fs.writeFileSync(path.join(dir, 'ids.next'), 'garbage\n');
    const other = spawnWriter(dir, 'observe', 'o', ['p/b'], 3);
    children.push(other.child);
    const otherIds = await readUntil(other, 'done');
    fs.writeFileSync(`${dir}.go-h`, '');
    const rest = await readUntil(holder, 'done');
    if (holder.child.exitCode === null) await once(holder.child, 'exit');
    const all = [...first, ...otherIds, ...rest].flatMap((l) => l.ids);
    assert.equal(new Set(all).size, all.length, `ids reported: holder ${JSON.stringify([...first, ...rest].flatMap((l) => l.ids))} other ${JSON.stringify(otherIds.flatMap((l) => l.ids))}`);
    assert.deepEqual(await duplicateIds(dir), {});
  });

  it('three processes, three projects each, observe and remember at once, with an import keeping ids and an import-git: no id repeats in any table', async () => {
    // An export whose ids are 1..N from another store.
    const src = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ids-src-'));
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ids-repo-'));
    try {
      const e0 = await MemoryEngine.open({ storeUri: src, embedder: 'none', maintenanceIntervalMs: 0 });
      await e0.observe(Array.from({ length: 300 }, (_, i) => ({ type: 'note', title: `imported ${i}`, narrative: `imported body ${i}` })), { project: 'p/imp' });
      for (let i = 0; i < 5; i++) await e0.remember({ title: `imp mem ${i}`, text: `imported memory ${i}` }, { project: 'p/imp' });
      await e0.close();
      const exp = await cli(['export', '--all-projects', '--store', src]);
      assert.equal(exp.code, 0, exp.stderr);
      const { execFileSync } = await import('node:child_process');
      const git = (...a: string[]): string => execFileSync('git', ['-C', repo, ...a], { env: { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' } }).toString();
      git('init', '-q');
      for (let i = 0; i < 40; i++) {
        fs.writeFileSync(path.join(repo, `f${i}.txt`), `content ${i}\n`);
        git('add', '.');
        git('commit', '-q', '-m', `commit number ${i} adds f${i}`);
      }
      const writers = ['x', 'y', 'z'].map((t) => spawnWriter(dir, t === 'z' ? 'remember' : 'observe', t, [`p/${t}1`, `p/${t}2`, 'p/shared'], 8));
      for (const w of writers) children.push(w.child);
      const jobs = [
        ...writers.map((w) => readUntil(w, 'done')),
        cli(['import', '--store', dir], exp.stdout),
        cli(['import-git', repo, '--project', 'p/git', '--store', dir]),
      ];
      const results = await Promise.all(jobs);
      const imp = results[3] as { code: number; stderr: string };
      const ig = results[4] as { code: number; stderr: string };
      assert.equal(imp.code, 0, imp.stderr);
      assert.equal(ig.code, 0, ig.stderr);
      const reported = (results.slice(0, 3) as Array<Array<{ p: string; ids: number[] }>>).flat();
      const dups = await duplicateIds(dir);
      assert.deepEqual(dups, {}, `duplicate ids; writers reported ${reported.length} writes`);
    } finally {
      fs.rmSync(src, { recursive: true, force: true });
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});
