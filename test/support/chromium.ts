import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

import { testDatabase } from './database.ts';

/** Debian's Chromium, driven by playwright-core (browsers that download themselves do not run here). */
export const executablePath = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(executablePath);

/**
 * A test file's share of its process's one Chromium: the contexts it opened, which `close()` closes.
 * The browser stays for the next file: a launch costs about a second of CPU, and every test works in
 * contexts of its own (their own cookies and storage) anyway.
 */
export type TestBrowser = Pick<Browser, 'newContext'> & { close(): Promise<void> };

let shared: Promise<Browser> | undefined;

export async function launchChromium(): Promise<TestBrowser> {
  const browser = await (shared ??= chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  }));
  const contexts = new Set<BrowserContext>();
  return {
    async newContext(options) {
      const context = await browser.newContext(options);
      contexts.add(context);
      context.on('close', () => contexts.delete(context));
      return context;
    },
    async close() {
      await Promise.all([...contexts].map((context) => context.close()));
    },
  };
}

/**
 * Browser tests run where Chromium is installed, and on SQLite only: what they check is what the page
 * shows and does, over the same server code on either database, and the API tests under every page
 * run on both. Chromium took a quarter of a run's CPU time when they ran on both.
 * Skips the test or the block otherwise, saying why once per process.
 */
export function skipWithoutChromium(context: Mocha.Context): void {
  if (chromiumMissing) {
    warnOnce(`skipped: ${executablePath} is missing (apt-get install -y chromium)`);
    context.skip();
  }
  if (testDatabase !== 'sqlite') {
    warnOnce('skipped: browser tests run on SQLite only');
    context.skip();
  }
}

let warned = false;
function warnOnce(message: string): void {
  if (!warned) {
    warned = true;
    console.warn(`    ${message}`);
  }
}

/** The widths docs/screenshots/ shows every page at; tests browse at the laptop's. */
export const viewports = { laptop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

/**
 * With E2E_SCREENSHOTS=<folder>, saves the page at laptop and phone width as `<name>-laptop.png` and
 * `<name>-phone.png`, then goes back to the laptop's width; without it, does nothing.
 */
export async function screenshotAtWidths(page: Page, name: string): Promise<void> {
  const folder = process.env.E2E_SCREENSHOTS;
  if (!folder) {
    return;
  }
  for (const [size, viewport] of Object.entries(viewports)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: join(folder, `${name}-${size}.png`), fullPage: true });
  }
  await page.setViewportSize(viewports.laptop);
}
