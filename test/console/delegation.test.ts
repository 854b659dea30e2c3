import { expect } from 'chai';

import { createApplication } from '../support/fixtures.ts';
import {
  accessTokenType,
  delegationSetup,
  exchange,
  expectIssued,
  userAccessToken,
} from '../token-exchange/support.ts';
import { openSection, useConsoleSession } from './support.ts';

/**
 * Delegation in the console: the policy "which applications may act for this application's users"
 * is set in the application's Token exchange section, and a delegated exchange's actor chain is
 * listed, with names, in the audit view.
 */
describe('console: type labels, the default secret, delegation policy and the actor chain in the audit view', function () {
  this.timeout(90_000);
  const session = useConsoleSession();

  it("sets the front end's delegation policy, and shows a delegated exchange's chain", async () => {
    const { page, service } = session();
    const setup = await delegationSetup(service);
    const actor = await createApplication(service, 'MachineToMachine', { name: 'Report agent' });

    await page.goto(`${service.url}/console/applications/${setup.frontend.id}`);
    const section = page.getByRole('region', { name: 'Token exchange' });
    const policy = section.getByRole('form', { name: 'Delegation' });
    // Chosen from the applications by name, each with its type in words.
    const choices = policy.getByRole('group', { name: 'Applications that may act' });
    await choices.getByLabel('Report agent (Machine-to-machine)').check();
    expect(await choices.getByRole('checkbox').count()).to.be.greaterThan(1);
    await policy.getByRole('button', { name: 'Save delegation' }).click();
    await policy.getByRole('status').waitFor();
    const saved = await service.api.get(`applications/${setup.frontend.id}`);
    expect(saved.body.customClientMetadata.delegation).to.deep.equal({ allowedActorClientIds: [actor.id] });
    await page.reload();
    await choices.getByLabel('Report agent (Machine-to-machine)').waitFor();
    expect(await choices.getByLabel('Report agent (Machine-to-machine)').isChecked()).to.equal(true);

    // The list names types in words; a new application's first secret is its default secret.
    await openSection(page, 'Applications');
    await page
      .getByRole('row', { name: /Report agent/ })
      .getByText('Machine-to-machine', { exact: true })
      .waitFor();
    await page.getByRole('link', { name: 'Report agent' }).click();
    await page.getByText('Type: Machine-to-machine').waitFor();
    await page.getByRole('region', { name: 'Credentials' }).getByText('Default secret', { exact: true }).waitFor();

    const subject = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    const actorToken = (await service.token(actor.id, actor.secret, { grant_type: 'client_credentials' })).body;
    expectIssued(
      await exchange(service, setup.backend, {
        subject_token: subject,
        subject_token_type: accessTokenType,
        actor_token: String(actorToken.access_token),
        actor_token_type: accessTokenType,
        resource: setup.apiB.resource.indicator,
        scope: 'read:b',
      }),
    );

    await openSection(page, 'Audit log');
    await page.getByLabel('Kind').selectOption('exchanges');
    await page.getByRole('button', { name: 'Filter' }).click();
    const chain = page.getByRole('list', { name: 'Actor chain, current actor first' }).first();
    await chain.waitFor();
    expect(await chain.textContent()).to.include('Report agent');
    await page.screenshot({ path: '/tmp/console-audit-actor-chain.png', fullPage: true });
    expect(session().problems).to.deep.equal([]);
  });
});
