/**
 * `npm run screenshots`: every console page and the hosted sign-in pages (`hosted-*`) at laptop
 * (1280×800) and phone (390×844) widths, into docs/screenshots/. Starts the service on a throwaway
 * SQLite database, fills it with a little of everything through the management API, creates the
 * first administrator and signs in through the console as a person would. Fails if a page raises a
 * script or console error.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';

import { createService } from '../lib/app.ts';
import { loadConfig } from '../lib/config/env.ts';
import { createLogger } from '../lib/http/logger.ts';

const output = 'docs/screenshots';
const viewports = { laptop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const admin = { username: 'admin', password: 'Sturdy-Console-7' };
const bootstrap = { id: 'screenshots-admin', secret: 'screenshots-admin-secret-0123' };

// The console, and the hosted pages the administrator signs in through, from the sources as they are.
for (const app of ['console', 'sign-in']) {
  if (
    spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', app, '--logLevel', 'warn'], {
      stdio: 'inherit',
    }).status !== 0
  ) {
    throw new Error(`the ${app} build failed`);
  }
}

const folder = mkdtempSync(join(tmpdir(), 'console-screenshots-'));
const receiver = createServer((_request, response) => response.end('ok')).listen(0, '127.0.0.1');
await new Promise((resolve) => receiver.once('listening', resolve));
// A free port, known before start: the issuer and the console's redirect URI name it.
const probe = createServer().listen(0, '127.0.0.1');
await new Promise((resolve) => probe.once('listening', resolve));
const { port } = probe.address() as AddressInfo;
await new Promise((resolve) => probe.close(resolve));
const base = `http://127.0.0.1:${port}`;
const config = loadConfig({
  PORT: String(port),
  ENDPOINT: base,
  DB_URL: `sqlite:${join(folder, 'db.sqlite3')}`,
  LOG_LEVEL: 'silent',
  BOOTSTRAP_ADMIN_CLIENT_ID: bootstrap.id,
  BOOTSTRAP_ADMIN_CLIENT_SECRET: bootstrap.secret,
});
const service = await createService(config, createLogger({ production: true, logLevel: 'silent' }));
await service.listen(port);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

async function token(form: Record<string, string>): Promise<Record<string, string>> {
  const response = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${form.client_id}:${form.client_secret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(
      Object.fromEntries(Object.entries(form).filter(([name]) => name !== 'client_id' && name !== 'client_secret')),
    ),
  });
  return (await response.json()) as Record<string, string>;
}

const management = (
  await token({
    client_id: bootstrap.id,
    client_secret: bootstrap.secret,
    grant_type: 'client_credentials',
    resource: config.managementApiResource,
    scope: 'all',
  })
).access_token;

async function api<T = Record<string, string>>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}/api/${path}`, {
    method,
    headers: { authorization: `Bearer ${management}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  }
  return (response.status === 204 ? {} : await response.json()) as T;
}

/** A little of everything, so that no page is empty. */
async function seed() {
  const apiA = await api('POST', 'resources', { name: 'Orders API', indicator: 'https://orders.example.com' });
  const apiB = await api('POST', 'resources', {
    name: 'Billing API',
    indicator: 'https://billing.example.com',
    accessTokenTtl: 900,
  });
  const readA = await api('POST', `resources/${apiA.id}/scopes`, { name: 'read:orders', description: 'Read orders' });
  await api('POST', `resources/${apiA.id}/scopes`, { name: 'write:orders', description: 'Create and change orders' });
  const readB = await api('POST', `resources/${apiB.id}/scopes`, {
    name: 'read:invoices',
    description: 'Read invoices',
  });
  const role = await api('POST', 'roles', {
    name: 'Billing viewer',
    description: 'Reads invoices and orders',
    scopeIds: [readA.id, readB.id],
  });
  const users = [];
  for (const [username, name, email] of [
    ['alice', 'Alice Martin', 'alice@example.com'],
    ['bob', 'Bob Chen', 'bob@example.com'],
    ['carol', 'Carol Diaz', 'carol@example.org'],
  ] as const) {
    users.push(await api('POST', 'users', { username, name, primaryEmail: email, password: 'Correct-Horse-9' }));
  }
  await api('POST', `users/${users[0].id}/roles`, { roleIds: [role.id] });
  await api('POST', 'applications', {
    name: 'Storefront',
    type: 'SPA',
    oidcClientMetadata: { redirectUris: ['https://shop.example.com/callback'], postLogoutRedirectUris: [] },
  });
  const backend = await api('POST', 'applications', {
    name: 'Orders backend',
    type: 'Traditional',
    oidcClientMetadata: { redirectUris: ['https://orders.example.com/callback'], postLogoutRedirectUris: [] },
    customClientMetadata: { allowTokenExchange: true },
  });
  await api('POST', 'applications', { name: 'Nightly billing job', type: 'MachineToMachine' });
  const organization = await api('POST', 'organizations', { name: 'Acme Corp', description: 'Our first customer' });
  const scope = await api('POST', 'organization-scopes', { name: 'invite:member', description: 'Invite people' });
  const orgRole = await api('POST', 'organization-roles', {
    name: 'Organization admin',
    description: 'Runs the organization',
    organizationScopeIds: [scope.id],
  });
  await api('POST', `organizations/${organization.id}/users`, { userIds: [users[0].id, users[1].id] });
  await api('POST', `organizations/${organization.id}/users/${users[0].id}/roles`, {
    organizationRoleIds: [orgRole.id],
  });
  await api('POST', `organizations/${organization.id}/jit/email-domains`, { emailDomain: 'acme.example.com' });
  await api('POST', 'organization-invitations', {
    invitee: 'dave@acme.example.com',
    organizationId: organization.id,
    expiresAt: Date.now() + 7 * 86_400_000,
    organizationRoleIds: [orgRole.id],
  });
  const hook = await api('POST', 'hooks', {
    name: 'Audit sink',
    events: ['User.Created', 'User.Deleted', 'PostSignIn'],
    config: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
  });
  // Token exchanges for the dashboard and the audit log: impersonation subject tokens (one succeeds), and a bad token (refused).
  for (const user of users.slice(0, 2)) {
    const { subjectToken } = await api('POST', 'subject-tokens', { userId: user.id });
    await token({
      client_id: backend.id,
      client_secret: backend.secret,
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subjectToken,
      subject_token_type: 'urn:logto:token-type:impersonation_token',
      resource: 'https://billing.example.com',
      scope: 'read:invoices',
    });
  }
  await token({
    client_id: backend.id,
    client_secret: backend.secret,
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: 'not-a-token',
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    resource: 'https://billing.example.com',
  });
  await api('POST', 'users', { username: 'dave', name: 'Dave Ito' });
  // Wait for the dispatcher and the batched audit log.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return { application: backend, resource: apiA, role, user: users[0], organization, hook };
}

const problems: string[] = [];
async function newPage(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      problems.push(`${page.url()}: ${message.text()}`);
    }
  });
  return page;
}

try {
  const seeded = await seed();
  const page = await newPage(viewports.laptop);
  await page.goto(`${base}/console`);
  await page.getByRole('heading', { name: 'Create the first administrator' }).waitFor();
  for (const [name, viewport] of Object.entries(viewports)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: join(output, `first-run-${name}.png`) });
  }
  await page.getByLabel('Username').fill(admin.username);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Create administrator' }).click();
  // The first run signs the new administrator in.
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  // The hosted pages, in another browser's sign-in to the console (its interaction lives in a cookie),
  // each with its first input focused.
  const visitor = await newPage(viewports.laptop);
  await visitor.goto(`${base}/console`);
  await visitor.getByRole('button', { name: 'Sign in' }).click();
  await visitor.waitForURL((url) => url.pathname === '/sign-in');
  const hosted = ['sign-in', 'register', 'reset-password'];
  for (const name of hosted) {
    for (const [size, viewport] of Object.entries(viewports)) {
      await visitor.setViewportSize(viewport);
      await visitor.goto(`${base}/${name}`);
      await visitor.waitForFunction(() => document.activeElement?.tagName === 'INPUT');
      await visitor.screenshot({ path: join(output, `hosted-${name}-${size}.png`), fullPage: true });
    }
  }
  await visitor.context().close();

  const pages: Array<[string, string]> = [
    ['dashboard', '/'],
    ['applications', '/applications'],
    ['application', `/applications/${seeded.application.id}`],
    ['resources', '/resources'],
    ['resource', `/resources/${seeded.resource.id}`],
    ['roles', '/roles'],
    ['role', `/roles/${seeded.role.id}`],
    ['users', '/users'],
    ['user', `/users/${seeded.user.id}`],
    ['organizations', '/organizations'],
    ['organization', `/organizations/${seeded.organization.id}`],
    ['organization-roles', '/organization-roles'],
    ['webhooks', '/webhooks'],
    ['webhook', `/webhooks/${seeded.hook.id}`],
    ['sign-in-experience', '/sign-in-experience'],
    ['email-templates', '/email-templates'],
    ['audit-log', '/audit-log'],
  ];
  for (const [name, path] of pages) {
    for (const [size, viewport] of Object.entries(viewports)) {
      await page.setViewportSize(viewport);
      await page.goto(`${base}/console${path}`);
      await page.locator('main h1').waitFor();
      await page.waitForFunction(() => !document.querySelector('[aria-busy=true]'));
      await page.screenshot({ path: join(output, `${name}-${size}.png`), fullPage: true });
    }
  }
  console.log(`wrote ${(pages.length + hosted.length + 1) * 2} screenshots to ${output}/`);
  if (problems.length > 0) {
    throw new Error(`the pages raised errors:\n${problems.join('\n')}`);
  }
} finally {
  await browser.close();
  await service.close();
  receiver.close();
  rmSync(folder, { recursive: true, force: true });
}
