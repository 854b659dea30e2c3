import { existsSync } from 'node:fs';

import { chromium } from 'playwright-core';

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
