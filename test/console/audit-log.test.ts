import { expect } from 'chai';

import { waitForLog } from '../audit/support.ts';
import { createSpa, openExperience, passwordVerification } from '../experience/experience-helpers.ts';
import { expectError } from '../support/expect.ts';
import { admin, openSection, useConsoleSession } from './support.ts';

/** The audit log page: who did what, with names beside the ids. */
describe('console: the audit log page', function () {
  this.timeout(90_000);
  const session = useConsoleSession();

  it('shows a change made in the console and a failed sign-in, with names beside ids', async () => {
    const { page, service } = session();
    await openSection(page, 'Roles');
    await page.getByLabel('Name').fill('Auditors');
    await page.getByLabel('Description').fill('Read the trail');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'Auditors' }).waitFor();
    const created = await waitForLog(
      service,
      { logKey: 'Management.Write' },
      (entry) => entry.names[entry.payload.createdId] === 'Auditors',
    );
    const adminId = created.payload.userId as string;
    expect(created.names[adminId]).to.equal(admin.username);

    const spa = await createSpa(service);
    const browser = await openExperience(service, spa.id);
    expectError(
      await passwordVerification(browser, { type: 'username', value: admin.username }, 'Not-My-Password-1'),
      422,
      'session.invalid_credentials',
    );
    await waitForLog(service, { result: 'Error' }, (entry) => entry.payload.identifier?.value === admin.username);

    await openSection(page, 'Audit log');
    await page.getByLabel('Kind').selectOption({ label: 'Management changes' });
    await page.getByRole('button', { name: 'Filter' }).click();
    const change = page.getByRole('row').filter({ hasText: 'POST /api/roles' });
    await change.waitFor();
    // The actor by username and the application by name, each beside its id; the created role by name.
    expect(await change.getByRole('cell').nth(3).textContent()).to.equal(`${admin.username} ${adminId}`);
    expect(await change.getByRole('cell').nth(4).textContent()).to.equal('Admin console console');
    await change.getByText('Auditors').waitFor();

    await page.getByLabel('Kind').selectOption({ label: 'Failed sign-ins and verifications' });
    await page.getByRole('button', { name: 'Filter' }).click();
    const failure = page.getByRole('row').filter({ hasText: 'Interaction.SignIn.Verification.Password.Submit' });
    await failure.waitFor();
    await failure.getByText(`username: ${admin.username}`).waitFor();
    await failure.getByText('session.invalid_credentials').waitFor();
    const spaName = (await service.api.get(`applications/${spa.id}`)).body.name;
    expect(await failure.getByRole('cell').nth(4).textContent()).to.equal(`${spaName} ${spa.id}`);

    expect(session().problems).to.deep.equal([]);
  });
});
