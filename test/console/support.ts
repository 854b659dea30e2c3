import { type BrowserContext, type Page } from 'playwright-core';

import { buildIfStale } from '../support/build.ts';
import { launchChromium, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { startService, type TestService } from '../support/service.ts';

export type ConsoleSession = {
  service: TestService;
  browser: TestBrowser;
  page: Page;
  /** Script errors and console errors the pages raised (HTTP error statuses the console shows are expected). */
  problems: string[];
  /** A page of its own (cookies, storage); `locale` is the browser's language (navigator.languages, Accept-Language). */
  newPage(
    viewport?: { width: number; height: number },
    options?: { locale?: string; timezoneId?: string },
  ): Promise<{ page: Page; problems: string[] }>;
  close(): Promise<void>;
};

export const admin = { username: 'console_admin', password: 'Sturdy-Console-7' };

/**
 * The console session of a describe block: started before its tests (skipped where Chromium is
 * missing) and closed after them. Tests read it through the function this returns.
 */
export function useConsoleSession(env: Record<string, string> = {}): () => ConsoleSession {
  let session: ConsoleSession | undefined;
  before(async function () {
    skipWithoutChromium(this);
    session = await startConsole(env);
  });
  after(async () => {
    await session?.close();
  });
  return () => {
    if (!session) {
      throw new Error('no console session: before() did not finish');
    }
    return session;
  };
}

/**
 * Starts the service on a fresh database and a browser, and creates the first administrator through
 * the console's first-run form, which signs them in: the dashboard shows without another sign-in.
 */
export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleSession> {
  // Administrators sign in through the hosted sign-in pages: both applications are under test.
  buildIfStale();
  const service = await startService({ env });
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];

  const newPage = async (
    viewport = { width: 1280, height: 800 },
    options: { locale?: string; timezoneId?: string } = {},
  ) => {
    const context = await browser.newContext({ viewport, ...options });
    contexts.push(context);
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort(),
    );
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // Chromium reports every 4xx answer as "Failed to load resource"; the console shows those on the page.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        problems.push(`console: ${message.text()}`);
      }
    });
    return { page, problems };
  };

  const { page, problems } = await newPage();
  await page.goto(`${service.url}/console`);
  await page.getByRole('heading', { name: 'Create the first administrator' }).waitFor();
  await page.getByLabel('Username').fill(admin.username);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Create administrator' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();

  return {
    service,
    browser,
    page,
    problems,
    newPage,
    async close() {
      await Promise.all(contexts.map((context) => context.close()));
      await browser.close();
      await service.stop();
    },
  };
}

/** Client-side navigation through the console's section links (as a person would). */
export async function openSection(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
}
