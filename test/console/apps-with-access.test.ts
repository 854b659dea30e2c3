import { join } from 'node:path';
import { expect } from 'chai';

import { createSpa, createUser, signInWithPassword } from '../experience/experience-helpers.ts';
import { unique } from '../support/values.ts';
import { useConsoleSession } from './support.ts';

/**
 * A user's "Apps with access" in the console: the grants recorded when they signed in to (consented
 * to) applications, from `GET /api/users/:id/grants`, each revocable (`DELETE .../grants/:grantId`).
 *
 * E2E_SCREENSHOTS=<folder> also saves the section at laptop and phone width (docs/screenshots/).
 */
describe("console: a user's apps with access; passkey sign-in", function () {
  this.timeout(90_000);
  const session = useConsoleSession();

  it("lists the applications a user signed in to, and revokes one's access", async () => {
    const { page, service, problems } = session();
    const password = 'Granite-Kestrel-64';
    const username = unique('grants');
    const user = await createUser(service, { username, password });
    const spa = await createSpa(service);
    expect(
      (await signInWithPassword(service, spa.id, { type: 'username', value: username }, password)).statusCode,
    ).to.equal(200);
    const application = (await service.api.get(`applications/${spa.id}`)).body as { name: string };

    await page.goto(`${service.url}/console/users/${user.id}`);
    const section = page.getByRole('region', { name: 'Apps with access' });
    const row = section.getByRole('listitem').filter({ hasText: application.name });
    await row.waitFor();
    expect(await row.textContent()).to.include('openid');
    const screenshots = process.env.E2E_SCREENSHOTS;
    if (screenshots) {
      for (const [width, height, label] of [
        [390, 760, 'phone'],
        [1280, 800, 'laptop'],
      ] as const) {
        await page.setViewportSize({ width, height });
        await section.scrollIntoViewIfNeeded();
        await section.screenshot({ path: join(screenshots, `user-apps-with-access-${label}.png`) });
      }
    }

    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await section.getByText('No application has access.').waitFor();
    expect((await service.api.get(`users/${user.id}/grants`)).body.grants).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it("the sign-in experience page turns passkey sign-in on (Logto's passkeySignIn)", async () => {
    const { page, service, problems } = session();
    await page.goto(`${service.url}/console/sign-in-experience`);
    const switches = page.getByRole('group', { name: 'Passkey sign-in' });
    const alone = switches.getByLabel('Users may sign in with a passkey alone (no password)');
    expect(await alone.isChecked()).to.equal(false);
    await alone.check();
    await switches.getByLabel("Offer passkeys in the username field's autofill").uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    expect((await service.api.get('sign-in-exp')).body.passkeySignIn).to.deep.equal({
      enabled: true,
      showPasskeyButton: true,
      allowAutofill: false,
    });
    expect(problems).to.deep.equal([]);
  });
});
