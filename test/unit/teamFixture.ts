// The team-store tests' harness: a temporary folder per test, local S3 API servers (s3rver made
// safe, fixtures/s3ServerProcess.cjs) and people's engines sharing through them, all stopped and
// removed after each test.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryEngine } from '../../src/core/engine';
import { rowsToArrow } from '../../src/core/store/arrowRows';
import { objectStorageOptions, parseObjectLocation } from '../../src/core/store/objectStorage';
import { TeamTable, teamItemsSchema } from '../../src/core/team/teamTable';
import { startS3Server, until } from './fixtures/s3Server';
import type { S3Server, S3ServerOptions } from './fixtures/s3Server';

export interface PersonOptions {
  /** Environment for the team store (credentials, endpoint); the server's own by default. */
  env?: Record<string, string>;
  uri?: string;
  retryMs?: number;
  logger?: (message: string) => void;
  /** Waits until the team store is online. */
  online?: boolean;
}

export interface TeamHarness {
  dir(): string;
  server(options?: Partial<S3ServerOptions>): Promise<S3Server>;
  /** Name's engine with a personal store of its own and the team store. */
  person(name: string, s: S3Server | null, options?: PersonOptions): Promise<MemoryEngine>;
  /** Stops or closes `x` after the test, with the rest. */
  keep<T extends S3Server | MemoryEngine>(x: T): T;
}

/** Call inside a describe: registers the hooks that make and clean up each test's folder, servers and engines. */
export function teamHarness(): TeamHarness {
  let dir = '';
  const servers: S3Server[] = [];
  const engines: MemoryEngine[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-team-'));
  });
  afterEach(async () => {
    // An engine whose close does not end fails the test by name, after the rest is cleaned up
    // (a close's waits on the team store are bounded by REMOTE_WAIT_MS).
    const closed = await Promise.all(engines.splice(0).map((e) => Promise.race([e.close().then(() => true, () => true), new Promise<false>((r) => setTimeout(() => r(false), 60_000).unref())])));
    const unclosed = closed.flatMap((ok, i) => (ok ? [] : [`engine ${i + 1}`]));
    // A test may have stopped a server itself.
    for (const s of servers.splice(0)) await s.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    if (unclosed.length) throw new Error(`${unclosed.join(', ')} of this test did not close within 60 s`);
  });
  return {
    dir: () => dir,
    keep(x) {
      if (x instanceof MemoryEngine) engines.push(x);
      else servers.push(x as S3Server);
      return x;
    },
    async server(options = {}) {
      const s = await startS3Server({ directory: options.directory ?? path.join(dir, `s3-${servers.length}`), ...options });
      servers.push(s);
      return s;
    },
    async person(name, s, options = {}) {
      const engine = await MemoryEngine.open({
        storeUri: path.join(dir, `${name}-store`),
        embedder: 'none',
        maintenanceIntervalMs: 0,
        logger: options.logger,
        team: { uri: options.uri ?? 's3://team/acme', author: `${name} <${name.toLowerCase()}@example.com>`, env: { ...s?.env, ...options.env }, refreshMs: 0, retryMs: options.retryMs ?? 200 },
      });
      engines.push(engine);
      if (options.online) await until(async () => (await engine.teamStatus())?.state === 'online');
      return engine;
    },
  };
}

/** The objects of the bucket whose bytes hold `needle`. */
export async function bucketHolds(server: S3Server, needle: string): Promise<string[]> {
  return (await server.files()).filter((f) => f.bytes.includes(Buffer.from(needle))).map((f) => f.file);
}

/**
 * A row of the team store as anyone who can write the bucket may put it there by hand: a memory
 * of github.com/acme/shared shared by Mallory, `over` changing any column.
 */
export function handTeamRow(dim: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Date.now();
  return {
    node_id: '11111111-2222-5333-8444-555555555500', layer: 'L2', source_kind: 'memory', source_id: 4242, project: 'github.com/acme/shared', branch: null, type: 'note',
    title: 'Injected', text: 'injected', search_text: 'injected', files: null, commit_sha: null, session_id: null, created_at_epoch: now,
    last_accessed_epoch: null, access_count: 0, status: 'active', embed_model: '', vector: new Array(dim).fill(0),
    shared_by: 'Mallory <m@example.com>', shared_at_epoch: now, origin: 'memory/1', ...over,
  };
}

/** The team store the harness's people share (s3://team/acme), opened as a writer of the bucket would. */
export function teamTableOf(s: S3Server): Promise<TeamTable> {
  return TeamTable.open('s3://team/acme', objectStorageOptions(parseObjectLocation('s3://team/acme')!, s.env), 16);
}

/** Puts rows in the team store by hand (handTeamRow with each of `overs`). */
export async function injectTeamRows(s: S3Server, ...overs: Record<string, unknown>[]): Promise<void> {
  const remote = await teamTableOf(s);
  await remote.table.add(rowsToArrow(teamItemsSchema(remote.dimension), overs.map((over) => handTeamRow(remote.dimension, over))));
  remote.close();
}
