// `code-memory eval --html <file>`: the report as a page, looked at in headless Chromium
// (playwright-core; the browser at CHROMIUM_PATH or /usr/bin/chromium): each tool's numbers, each
// question's rank per tool, the subjects of its commits and of what a tool answered instead, and
// nothing of a commit message or question that a page could run or load.

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { runMain } from './cliInProcess';
import { makeGitRepo, removeDir, tempDir } from './mcpFixture';
import type { TestRepo } from './mcpFixture';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HOSTILE = '<img src=x onerror="document.title=1"><script>document.title=2</script>';

interface Page {
  title: string;
  csp: string | null;
  scripts: number;
  images: number;
  rows: Array<{ id: string; ranks: string[]; text: string }>;
  headers: string[];
  bars: string[];
}

const READ = `(() => ({
  title: document.title,
  csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? null,
  scripts: document.querySelectorAll('script').length,
  images: document.querySelectorAll('img, iframe, object, embed').length,
  headers: [...document.querySelectorAll('table')].at(-1).querySelector('tr').innerText.split('\\t').map((s) => s.trim()),
  rows: [...[...document.querySelectorAll('table')].at(-1).querySelectorAll('tr')].slice(1).map((tr) => ({
    id: tr.cells[0].innerText.trim(),
    ranks: [...tr.querySelectorAll('.r')].map((e) => e.innerText.trim()),
    text: tr.cells[tr.cells.length - 1].textContent,
  })),
  bars: [...document.querySelectorAll('table')][0].innerText.split('\\n').map((s) => s.trim()).filter(Boolean),
}))()`;

describe('eval --html: the report as a page', function () {
  this.timeout(240_000);
  let work: string;
  let repo: TestRepo;
  let browser: Browser | undefined;

  before(async () => {
    if (!existsSync(chromiumPath)) {
      throw new Error(`Chromium not found at ${chromiumPath}: this test reads the report in a browser. Install the Debian package \`chromium\` or set CHROMIUM_PATH.`);
    }
    work = tempDir('evalhtml');
    repo = makeGitRepo();
    writeFileSync(path.join(repo.dir, 'notes.md'), 'release notes\n');
    execFileSync('git', ['-C', repo.dir, 'add', '-A']);
    execFileSync('git', ['-C', repo.dir, 'commit', '-q', '-m', `Release notes ${HOSTILE}`]);
    repo.shas.hostile = execFileSync('git', ['-C', repo.dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    // A commit on a branch the import does not read: no tool can answer it.
    execFileSync('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'side']);
    execFileSync('git', ['-C', repo.dir, 'commit', '-q', '--allow-empty', '-m', 'Quantum entanglement for the uploader']);
    repo.shas.side = execFileSync('git', ['-C', repo.dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    execFileSync('git', ['-C', repo.dir, 'checkout', '-q', 'main']);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'] });
  });

  after(async () => {
    await browser?.close();
    removeDir(work);
    removeDir(repo.dir);
  });

  it('shows each tool, each question with its rank per tool, and the subjects of the commits, all as text', async () => {
    const questions = path.join(work, 'q.jsonl');
    writeFileSync(
      questions,
      [
        { id: 'q-csv', question: 'Where was the CSV line parser for the import wizard added?', gold_commits: [repo.shas.parser], kind: 'identifier' },
        { id: 'q-miss', question: `Which change taught the uploader about quantum entanglement? ${HOSTILE}`, gold_commits: [repo.shas.side.slice(0, 8)], kind: 'paraphrase' },
        { id: 'q-notes', question: 'When were the release notes written?', gold_commits: [repo.shas.hostile], kind: 'paraphrase' },
      ]
        .map((q) => JSON.stringify(q))
        .join('\n'),
    );
    const html = path.join(work, 'report.html');
    const json = path.join(work, 'report.json');
    const r = await runMain(['eval', '--repo', repo.dir, '--queries', questions, '--embedder', 'none', '--store', path.join(work, 'store'), '--html', html, '--out', json]);
    assert.equal(r.code, 0, r.err.slice(-800));
    const report = JSON.parse(readFileSync(json, 'utf8')) as { per_question: Array<{ id: string; ranks: Record<string, number | null> }>; subjects: Record<string, string> };
    assert.equal(report.subjects[repo.shas.parser.slice(0, 10)], 'Add a CSV line parser for the import wizard');

    const page = await browser!.newPage();
    await page.goto(`file://${html}`);
    const shown = (await page.evaluate(READ)) as Page;
    await page.close();
    assert.equal(shown.scripts, 0, 'no script on the page');
    assert.equal(shown.images, 0, 'no element of a commit message or question was made');
    assert.match(shown.title, /^Retrieval evaluation: /, 'no script ran (it would have set the title)');
    assert.match(shown.csp ?? '', /default-src 'none'/);
    assert.deepEqual(shown.headers.slice(0, 5), ['id', 'kind', 'recall', 'recall_context', 'retrieve_memory']);
    for (const tool of ['recall', 'recall_context', 'retrieve_memory']) assert.ok(shown.bars.some((line) => line.startsWith(tool)), `${tool} has its row of bars`);

    assert.deepEqual(shown.rows.map((row) => row.id), ['q-csv', 'q-miss', 'q-notes']);
    for (const row of shown.rows) {
      const ranks = report.per_question.find((q) => q.id === row.id)!.ranks;
      assert.deepEqual(row.ranks, ['recall', 'recall_context', 'retrieve_memory'].map((t) => (ranks[t] === null ? 'miss' : String(ranks[t]))), row.id);
    }
    assert.equal(shown.rows[0].ranks[0], '1', 'the CSV question is answered first by recall');
    assert.ok(shown.rows[0].text.includes('Add a CSV line parser for the import wizard'), 'the gold commit is named by its subject');
    // A miss names the gold commit (given abbreviated; here outside the history imported) and what
    // the tools answered instead, by subject.
    assert.deepEqual(shown.rows[1].ranks, ['miss', 'miss', 'miss']);
    assert.match(shown.rows[1].text, new RegExp(`${repo.shas.side.slice(0, 8)} not in the history imported`));
    assert.match(shown.rows[1].text, /answered first:.*(Add a CSV line parser|Retry failed uploads|Dark mode toggle|Release notes)/s);
    assert.ok(shown.rows[1].text.includes(HOSTILE), 'the question\'s markup shows as text');
    assert.ok(shown.rows[2].text.includes(`Release notes ${HOSTILE}`), 'the subject\'s markup shows as text');
  });

  it('--html into a folder that does not exist is refused before the run', async () => {
    const questions = path.join(work, 'one.jsonl');
    writeFileSync(questions, `${JSON.stringify({ id: 'q1', question: 'csv parser', gold_commits: [repo.shas.parser] })}\n`);
    const r = await runMain(['eval', '--repo', repo.dir, '--queries', questions, '--embedder', 'none', '--html', path.join(work, 'no-such-folder', 'r.html')]);
    assert.equal(r.code, 2, r.err.slice(-400));
    assert.match(r.err, /cannot write .*r\.html: the folder .*no-such-folder does not exist/);
    assert.doesNotMatch(r.err, /import: \d+\/\d+ commits/, 'the evaluation ran before --html was checked');
    const empty = await runMain(['eval', '--repo', repo.dir, '--queries', questions, '--embedder', 'none', '--html', '']);
    assert.equal(empty.code, 2);
    assert.match(empty.err, /--html needs a file path/);
  });
});
