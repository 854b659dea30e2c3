import { expect } from 'chai';

import { createApplication, createMachineWithScopes, createResource } from '../support/fixtures.ts';
import {
  accessTokenType,
  exchange,
  expectIssued,
  expectOAuthError,
  userAccessToken,
} from '../token-exchange/support.ts';
import { openSection, useConsoleSession } from './support.ts';

/**
 * The specification's console walkthrough: an administrator sets up API A, API B, a role, a user
 * and a Traditional application in the console, switches "Allow token exchange" on in its "Token
 * exchange" section (a script's exchange then succeeds) and off again (the next one is refused).
 */
describe('console: the "Allow token exchange" switch', function () {
  this.timeout(90_000);
  const session = useConsoleSession();

  it('creates the first administrator only once', async () => {
    const again = await session().service.http.post('api/console/first-administrator', {
      json: { username: 'intruder', password: 'Sturdy-Console-8' },
    });
    expect(again.statusCode).to.equal(409);
    expect(again.body.code).to.equal('console.administrator_exists');
    const config = await session().service.http.get('api/console/config');
    expect(config.body).to.include({
      clientId: 'console',
      hasAdministrator: true,
      redirectUri: `${session().service.url}/console/callback`,
    });
  });

  it('adds a secret with an expiry in the Credentials section, shows its value once, and deletes it', async () => {
    const { page, service } = session();
    const { resource, scopeIds } = await createResource(service, ['read']);
    const { application } = await createMachineWithScopes(service, [scopeIds.read]);
    const token = (secret: string) =>
      service.token(application.id, secret, {
        grant_type: 'client_credentials',
        resource: resource.indicator,
        scope: 'read',
      });
    await page.goto(`${service.url}/console/applications/${application.id}`);
    await page.getByRole('heading', { level: 1, name: application.name }).waitFor();
    const credentials = page.getByRole('region', { name: 'Credentials' });
    // Created with Logto's "Default secret", its value hidden until asked for.
    const initial = credentials.getByRole('row').filter({ hasText: 'Default secret' });
    await initial.waitFor();
    expect(await initial.textContent()).to.not.include(application.secret);
    await initial.getByRole('button', { name: 'Show', exact: true }).click();
    expect(await initial.getByTestId('secret-value').textContent()).to.equal(application.secret);

    // Tomorrow in local time, typed as ISO 8601 (which the date field reads in any language).
    const tomorrow = new Date(Date.now() + 86_400_000);
    const pad = (value: number) => String(value).padStart(2, '0');
    const local = `${tomorrow.getFullYear()}-${pad(tomorrow.getMonth() + 1)}-${pad(tomorrow.getDate())}T${pad(tomorrow.getHours())}:${pad(tomorrow.getMinutes())}`;
    await credentials.getByLabel('Secret name').fill('rotation-1');
    await credentials.getByLabel('Expires (optional)').fill(local);
    await credentials.getByRole('button', { name: 'Add secret' }).click();
    const value = (await credentials.getByTestId('new-secret').textContent())!;
    expect(value).to.match(/^[0-9a-zA-Z]{32}$/);
    const row = credentials.getByRole('row').filter({ hasText: 'rotation-1' });
    await row.waitFor();
    expect(await row.textContent())
      .to.not.include('Never')
      .and.not.include(value);
    expect((await token(value)).statusCode).to.equal(200);
    await page.screenshot({ path: '/tmp/console-application-secrets.png', fullPage: true });

    // A name in use is said next to the field.
    await credentials.getByLabel('Secret name').fill('rotation-1');
    await credentials.getByRole('button', { name: 'Add secret' }).click();
    await credentials.locator('input[aria-invalid=true]').waitFor();
    expect(await credentials.getByRole('alert').first().textContent()).to.match(/rotation-1/);

    // Hidden once the page is loaded again, until asked for.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).to.not.include(value);

    await row.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    expect((await token(value)).statusCode).to.equal(401);
    expect((await token(application.secret)).statusCode).to.equal(200);
    expect(session().problems).to.deep.equal([]);
  });

  it('sets up the delegation in the console; the switch allows and then refuses the exchange', async () => {
    const { page, service } = session();
    const apis: Record<string, string> = {};
    for (const [name, permission] of [
      ['API A', 'read:a'],
      ['API B', 'read:b'],
    ] as const) {
      await openSection(page, 'API resources');
      const indicator = `https://${name.replace(' ', '-').toLowerCase()}.example.com`;
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('Identifier (indicator)').fill(indicator);
      await page.getByRole('button', { name: 'Create API' }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      await page.getByLabel('Permission name').fill(permission);
      await page.getByRole('button', { name: 'Add permission' }).click();
      await page.getByRole('cell', { name: permission }).waitFor();
      apis[name] = indicator;
    }

    // A second API with the same identifier: the API's answer is said next to the field.
    await openSection(page, 'API resources');
    await page.getByLabel('Name').fill('Duplicate');
    await page.getByLabel('Identifier (indicator)').fill(apis['API A']);
    await page.getByRole('button', { name: 'Create API' }).click();
    await page.locator('input[aria-invalid=true]').waitFor();
    expect(await page.getByLabel('Identifier (indicator)').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByRole('alert').textContent()).to.match(/indicator|in use|exists/i);

    await openSection(page, 'Roles');
    await page.getByLabel('Name').fill('B reader');
    await page.getByLabel('Description').fill('Reads API B');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'B reader' }).waitFor();
    await page.getByLabel('API', { exact: true }).selectOption({ label: 'API B' });
    await page
      .getByLabel('Permission', { exact: true })
      .locator('option', { hasText: 'read:b' })
      .waitFor({ state: 'attached' });
    await page.getByRole('button', { name: 'Add permission' }).click();
    await page.getByRole('listitem').filter({ hasText: 'read:b' }).waitFor();

    const user = { username: 'alice_console', password: 'Sturdy-Tulip-7' };
    await openSection(page, 'Users');
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { level: 1, name: user.username }).waitFor();
    await page.getByLabel('Role', { exact: true }).selectOption({ label: 'B reader' });
    await page.getByRole('button', { name: 'Assign role' }).click();
    await page.getByRole('region', { name: 'Roles' }).getByRole('link', { name: 'B reader' }).waitFor();

    await openSection(page, 'Applications');
    await page.getByLabel('Name').fill('API A backend');
    await page.getByLabel('Type').selectOption('Traditional');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('heading', { level: 1, name: 'API A backend' }).waitFor();
    const applicationId = page.url().split('/').pop()!;
    const initialSecret = page.getByRole('row').filter({ hasText: 'Default secret' });
    await initialSecret.getByRole('button', { name: 'Show', exact: true }).click();
    const secret = (await initialSecret.getByTestId('secret-value').textContent())!;
    const backend = { id: applicationId, secret };

    const tokenExchange = page.getByRole('region', { name: 'Token exchange' });
    const allow = tokenExchange.getByRole('switch', { name: 'Allow token exchange' });
    expect(await allow.isChecked()).to.equal(false);
    await allow.check();
    await page.waitForFunction(() => !document.querySelector<HTMLInputElement>('[role=switch]')?.disabled);
    expect(await allow.isChecked()).to.equal(true);

    // The script: a front end signs the user in for API A; API A's backend exchanges that token for API B.
    const frontend = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: ['http://frontend.test/callback'], postLogoutRedirectUris: [] },
    });
    const subjectToken = await userAccessToken(service, frontend.id, user, apis['API A']);
    const form = {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: apis['API B'],
      scope: 'read:b',
    };
    const issued = expectIssued(await exchange(service, backend, form));
    expect(issued.scope).to.equal('read:b');

    await allow.uncheck();
    await page.waitForFunction(() => !document.querySelector<HTMLInputElement>('[role=switch]')?.disabled);
    expect(await allow.isChecked()).to.equal(false);
    expectOAuthError(
      await exchange(service, backend, form),
      400,
      'unauthorized_client',
      'token exchange is not allowed for this application',
    );

    // A public application's switch is off and cannot be turned on, and the page says why.
    await page.goto(`${service.url}/console/applications/${frontend.id}`);
    await page.getByRole('heading', { level: 1, name: frontend.name }).waitFor();
    expect(await page.getByRole('switch', { name: 'Allow token exchange' }).isDisabled()).to.equal(true);
    await page.getByText('Public applications (single-page and native) cannot keep a secret').waitFor();

    // The dashboard and the audit log show both exchanges.
    await openSection(page, 'Dashboard');
    const chart = page.getByRole('figure').filter({ hasText: 'Token exchanges' });
    await chart.getByText('Succeeded 1', { exact: true }).waitFor();
    await chart.getByText('Refused 1', { exact: true }).waitFor();
    await openSection(page, 'Audit log');
    await page.getByLabel('Kind').selectOption({ label: 'Token exchanges' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('2 entries').waitFor();
    await page.getByText('token exchange is not allowed for this application').waitFor();

    // Signing out ends the provider's session too, and comes back to the console's sign-in.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${service.url}/console`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();

    expect(session().problems).to.deep.equal([]);
  });
});
