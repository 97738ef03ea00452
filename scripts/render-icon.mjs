// Renders the Marketplace icon, media/icon.png (128×128), from media/icon-marketplace.svg with
// the same headless Chromium the host tests use.   node scripts/render-icon.mjs
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumPath, repoRoot } from '../test/host/hostLauncher.mjs';

const svg = readFileSync(path.join(repoRoot, 'media/icon-marketplace.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: path.join(repoRoot, 'media/icon.png'), omitBackground: true });
  console.log('render-icon: wrote media/icon.png');
} finally {
  await browser.close();
}
