// The extension's UI in a real browser: the sidebar with sessions and memories, the details
// panel with its timeline, the Recall Context for Selection panel, the MCP server info, and a
// possible conflict between two decisions in the Memories view.
// Data comes in the way a user makes it: Import Git History, Add Note, editing a file, End
// Session Now, all through the command palette.
import { execFileSync } from 'node:child_process';

const TIMEOUT = 60_000;

async function answer(page, text, title) {
  // The command palette's input is the same widget: wait for the command's own input box, or
  // the text goes to the palette while the command is still starting.
  if (title) await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).first().waitFor({ state: 'visible', timeout: 15_000 });
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(text);
  await page.waitForTimeout(300);
  await page.keyboard.press('Enter');
}

async function pick(page, label) {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ state: 'visible', timeout: 15_000 });
  await row.click();
}

async function openFile(page, name) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(name);
  // Quick Open lists files only once its file search answers; Enter before that opens nothing.
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
  await page.locator(`.tab.active[aria-label^="${name}"]`).first().waitFor({ timeout: 15_000 });
}

/** Shows the Code Memory side bar; clicking its icon while it is showing would hide it. */
async function showCodeMemory(page) {
  const title = page.locator('.part.sidebar .title-label', { hasText: /Code Memory/i }).first();
  if (await title.isVisible()) return;
  await page.locator('.activitybar [aria-label^="Code Memory"]').first().click();
  await title.waitFor({ timeout: 15_000 });
}

/** The content frame of the webview panel whose tab title starts with `title`. */
async function webview(page, heading) {
  const frame = page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
  await frame.locator('h1', { hasText: heading }).first().waitFor({ timeout: TIMEOUT });
  return frame;
}

async function notification(page, text) {
  await page.locator('.notifications-toasts .notification-toast', { hasText: text }).first().waitFor({ timeout: TIMEOUT });
}

async function clearNotifications(page) {
  await page.keyboard.press('Escape');
  await page.locator('.notifications-toasts .codicon-notifications-clear').first().click({ timeout: 2000 }).catch(() => {});
}

async function closeEditors({ runFromPalette }) {
  await runFromPalette('View: Close All Editors');
}

export const steps = [
  {
    name: 'memory fills up: git history imported, notes added, a file edited and committed, the session ended',
    async run({ page, runFromPalette, commandTitle, workspace }) {
      await runFromPalette(commandTitle('codeMemory.importGitHistory'));
      await notification(page, /Imported \d+ commit/);
      await clearNotifications(page);

      await runFromPalette(commandTitle('codeMemory.addNote'));
      await answer(page, 'We keep math helpers pure: no I/O, no globals, so they can be tested in isolation', 'Add Note to Code Memory');
      await pick(page, 'Convention');
      await runFromPalette(commandTitle('codeMemory.addNote'));
      await answer(page, 'Chose plain number arithmetic over BigInt for add(): inputs never exceed 2^53', 'Add Note to Code Memory');
      await pick(page, 'Decision');

      await openFile(page, 'math.ts');
      await page.locator('.part.editor .monaco-editor .view-lines').first().click();
      await page.locator('.part.editor .monaco-editor.focused').first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Control+End');
      await page.keyboard.type('\nexport function multiply(a: number, b: number): number {\n  return a * b;\n');
      await page.locator('.part.editor .monaco-editor .view-line', { hasText: 'function multiply' }).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Control+S');
      await page.waitForTimeout(2500);
      // Commit it: the imported commit that added math.ts no longer describes the file as it is.
      execFileSync('git', ['-C', workspace, '-c', 'user.name=E2E', '-c', 'user.email=e2e@test.invalid', 'commit', '-qam', 'Add multiply']);
      await page.waitForTimeout(2500);
      await openFile(page, 'README.md');
      await page.waitForTimeout(1500);

      await runFromPalette(commandTitle('codeMemory.endSession'));
      await notification(page, /Session ended/);
      await clearNotifications(page);
    },
  },
  {
    name: 'the sidebar shows sessions (with summaries) and memories by type',
    async run({ page, screenshot, runFromPalette }) {
      await closeEditors({ runFromPalette });
      await showCodeMemory(page);
      const sidebar = page.locator('.part.sidebar');
      await sidebar.locator('.monaco-list-row', { hasText: /session/i }).first().waitFor({ timeout: TIMEOUT });
      // Expand the newest session so its observations show.
      const session = sidebar.locator('.monaco-list-row[aria-level="2"]').first();
      await session.waitFor({ timeout: TIMEOUT });
      await session.locator('.monaco-tl-twistie').click();
      await sidebar.locator('.monaco-list-row[aria-level="3"]').first().waitFor({ timeout: TIMEOUT });
      await sidebar.locator('.monaco-list-row', { hasText: 'Conventions' }).first().waitFor({ timeout: TIMEOUT });
      await sidebar.locator('.monaco-list-row', { hasText: 'Decisions' }).first().waitFor({ timeout: TIMEOUT });
      // Freshness: the new commit still holds (the "changed since" state is covered by captureContent.test.ts).
      await sidebar.locator('.monaco-list-row', { hasText: 'still holds' }).first().waitFor({ timeout: TIMEOUT });
      await screenshot('sidebar-sessions-memories', { readme: true });
    },
  },
  {
    name: 'a session opens in the details panel with its summary and timeline',
    async run({ page, screenshot }) {
      const sidebar = page.locator('.part.sidebar');
      await sidebar.locator('.monaco-list-row[aria-level="2"]').first().click();
      const frame = await webview(page, /\d/);
      await frame.locator('svg.timeline').first().waitFor({ timeout: TIMEOUT });
      await frame.locator('a.file', { hasText: 'math.ts' }).first().waitFor({ timeout: TIMEOUT });
      // The edit shows what changed, not only where.
      await frame.locator('pre.change', { hasText: 'function multiply' }).first().waitFor({ timeout: TIMEOUT });
      await screenshot('session-details', { readme: true });
      // Files are links that open the file.
      await frame.locator('a.file', { hasText: 'math.ts' }).first().click();
      await page.locator('.tab.active[aria-label^="math.ts"]').first().waitFor({ timeout: 15_000 });
    },
  },
  {
    name: 'Recall Context for Selection shows results with clickable references',
    async run({ page, screenshot, runFromPalette, commandTitle }) {
      await closeEditors({ runFromPalette });
      await openFile(page, 'math.ts');
      // Memory anchored to code: a CodeLens counts what memory holds about the file and its functions.
      await page.locator('.part.editor .codelens-decoration', { hasText: /Code Memory: .*edit/ }).first().waitFor({ timeout: TIMEOUT });
      await screenshot('codelens');
      // Select the word "multiply" on the line that declares it. The CodeLens of the function can
      // appear between finding the line and clicking it and push the line down: click again until
      // the status bar shows a selection.
      const editor = page.locator('.part.editor .monaco-editor .view-lines').first();
      const selected = page.locator('.statusbar-item', { hasText: /\(\d+ selected\)/ }).first();
      for (let attempt = 0; attempt < 5; attempt++) {
        await editor.locator('.view-line', { hasText: 'function multiply' }).first().dblclick({ position: { x: 130, y: 5 } });
        if (await selected.waitFor({ timeout: 2000 }).then(() => true, () => false)) break;
      }
      await selected.waitFor({ timeout: 5000 });
      // The editor has focus: no click before the palette, which could move its cursor off the selection.
      await runFromPalette(commandTitle('codeMemory.recallContextForSelection'), { keepFocus: true });
      const frame = await webview(page, /result/);
      await frame.locator('.result').first().waitFor({ timeout: TIMEOUT });
      await screenshot('recall-context-results', { readme: true });
      await frame.locator('.result a.title').first().click();
      await webview(page, /./);
    },
  },
  {
    name: 'Show MCP Server Info shows the endpoint, token, tools and store',
    async run({ page, screenshot, runFromPalette, commandTitle }) {
      await closeEditors({ runFromPalette });
      await runFromPalette(commandTitle('codeMemory.showMcpServerInfo'));
      const frame = await webview(page, /./);
      await frame.locator('dd', { hasText: '/v1/mcp/memory' }).first().waitFor({ timeout: TIMEOUT });
      await frame.locator('code', { hasText: 'recall_context' }).first().waitFor({ timeout: TIMEOUT });
      await screenshot('mcp-server-info', { readme: true });
    },
  },
  {
    name: 'two decisions that may disagree show in the Memories view as a possible conflict with both sides',
    async run({ page, screenshot, runFromPalette, commandTitle }) {
      await closeEditors({ runFromPalette });
      await runFromPalette(commandTitle('codeMemory.addNote'));
      await answer(page, 'The add helper uses plain numbers', 'Add Note to Code Memory');
      await pick(page, 'Decision');
      await runFromPalette(commandTitle('codeMemory.addNote'));
      await answer(page, 'The add helper should be BigInt based', 'Add Note to Code Memory');
      await pick(page, 'Decision');
      await showCodeMemory(page);
      const sidebar = page.locator('.part.sidebar');
      // Give the Memories view the room: fold the Sessions view.
      const sessions = sidebar.locator('.pane-header', { hasText: /^Sessions/i }).first();
      if ((await sessions.getAttribute('aria-expanded').catch(() => null)) === 'true') await sessions.click();
      await sidebar.locator('.monaco-list-row', { hasText: 'Possible conflicts' }).first().waitFor({ timeout: TIMEOUT });
      await sidebar.locator('.monaco-list-row', { hasText: 'The add helper should be BigInt based ↔ The add helper uses plain numbers' }).first().waitFor({ timeout: TIMEOUT });
      await sidebar.locator('.monaco-list-row[aria-level="3"]', { hasText: 'The add helper uses plain numbers' }).first().waitFor({ timeout: TIMEOUT });
      await sidebar.locator('.monaco-list-row', { hasText: 'The add helper should be BigInt based ↔' }).first().hover();
      await page.waitForTimeout(800);
      await screenshot('memories-conflict');
    },
  },
];
