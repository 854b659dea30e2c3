import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { chromium, type Page } from 'playwright-core';

/** Debian's Chromium, driven by playwright-core (browsers that download themselves do not run here). */
export const executablePath = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(executablePath);

export const launchChromium = () =>
  chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });

/** Skips the test or the block where Debian's Chromium is missing, and says so. */
export function skipWithoutChromium(context: Mocha.Context): void {
  if (chromiumMissing) {
    console.warn(`    skipped: ${executablePath} is missing (apt-get install -y chromium)`);
    context.skip();
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
