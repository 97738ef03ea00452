// A package of a monorepo opened alone: its commits' files are the repository's paths, and their freshness is checked as such.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitFreshness } from '../../src/core/capture/freshness';
import { recallContext } from '../../src/core/tools/recallContext';
import { toolContext } from './mcpFixture';
import { Harness, brief, git, makeRepo, tmp, writeFiles } from './captureHarness';

const A0 = 'export function price(n: number) {\n  return n * 2;\n}\n';

describe('freshness in a monorepo package opened alone', function () {
  this.timeout(120_000);
  let root: string;
  let h: Harness | undefined;
  beforeEach(() => {
    root = tmp('cm-audit-mono-');
  });
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a commit later changed again is not "still holds" when the server runs in the package folder', async () => {
      const mono = path.join(root, 'mono');
      makeRepo(mono, { 'packages/a/src/price.ts': A0, 'packages/b/src/other.ts': 'export const x = 1;\n' });
      const pkg = path.join(mono, 'packages/a');
      h = await new Harness({ folders: [pkg], repoRoots: [mono] }).start();
      writeFiles(mono, { 'packages/a/src/price.ts': A0.replace('n * 2', 'n * 3'), 'packages/b/src/other.ts': 'export const x = 2;\n' });
      git(mono, 'commit', '-q', '-am', 'Triple prices');
      h.gitRefresh();
      await h.flush();
      await new Promise((r) => setTimeout(r, 800));
      await h.flush();
      const obs = await h.observations(await h.project());
      const commit = obs.find((o) => o.type === 'commit');
      assert.ok(commit, brief(obs));
      const files = JSON.parse(String(commit!.files_modified ?? '[]')) as string[];
      assert.ok(files.includes('packages/a/src/price.ts'), `files are stored by their path in the repository: ${JSON.stringify(files)}`);
      // Freshness, run in the workspace folder as the extension does, sees a later change of it.
      const sha = git(mono, 'rev-parse', 'HEAD');
      writeFiles(mono, { 'packages/a/src/price.ts': A0.replace('n * 2', 'n * 4') });
      git(mono, 'commit', '-q', '-am', 'Quadruple prices');
      const f = await GitFreshness.forRepository(pkg).check(sha, files);
      await h.engine.settled();
      const pack = await recallContext(toolContext(h.engine, { project: await h.project() }, { freshness: GitFreshness.forRepository(pkg) }), { query: 'Triple prices' });
      const item = pack.items.find((i) => i.source_kind === 'observation' && i.source_id === commit!.id);
      assert.deepEqual({ state: f?.state, pack: item?.freshness }, { state: 'changed', pack: 'changed' }, `commit files ${JSON.stringify(files)}; freshness: ${JSON.stringify(f)}\n${pack.text}`);
  });
});
