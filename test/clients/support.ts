import type { Page } from 'playwright-core';

import { launchChromium, type TestBrowser } from '../support/chromium.ts';
import type { ServiceClient } from '../support/service.ts';

export type Person = { username: string; password: string };

/** A user who signs in with a username and password (created through the management API). */
export async function createPerson(service: ServiceClient, person: Person & Record<string, unknown>) {
  const created = await service.api.post('users', { json: person });
  if (created.statusCode !== 200) {
    throw new Error(`could not create ${person.username}: ${JSON.stringify(created.body)}`);
  }
  return created.body as { id: string };
}

/** A page in a fresh profile that reaches only this machine. */
export async function newPage(browser: TestBrowser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.route(
    (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
    (route) => route.abort(),
  );
  return context.newPage();
}

/**
 * What a person does when a client sends their browser to the service: opens `url`, signs in on the
 * hosted page (and allows a consent page, when one is shown). Resolves once the browser has left the
 * service's pages.
 */
export async function signInAt(page: Page, url: string, person: Person, serviceUrl: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Username or email').fill(person.username);
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const origin = new URL(serviceUrl).origin;
  await page.waitForURL((next) => next.origin !== origin || next.pathname === '/consent');
  if (new URL(page.url()).pathname === '/consent') {
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((next) => next.origin !== origin);
  }
}

export { launchChromium };
