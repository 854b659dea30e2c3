import { expect } from 'chai';

import { Receiver } from '../hooks/receiver.ts';
import { eventually } from '../support/eventually.ts';
import { ifSet } from '../support/values.ts';
import { openSection, useConsoleSession } from './support.ts';

/** A webhook made in the console: test send, then a real event's delivery listed with its answer. */
describe('console: webhooks', function () {
  this.timeout(90_000);
  let receiver: Receiver;

  // The receiver is on loopback: allowed outside production (HOOKS_ALLOW_PRIVATE_TARGETS' default), said here to be sure.
  const session = useConsoleSession({ HOOKS_ALLOW_PRIVATE_TARGETS: 'true', HOOKS_RETRY_SCHEDULE: '0.1' });

  before(async () => {
    receiver = await Receiver.start();
  });

  after(async () => {
    await ifSet(receiver)?.close();
  });

  it('creates a webhook, sends a test event and lists a delivery', async () => {
    const { page } = session();
    await openSection(page, 'Webhooks');
    await page.getByLabel('Name').fill('Audit sink');
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Headers').fill('X-Team: identity');
    const dataEvents = page.getByRole('group', { name: 'Data mutation events' });
    await dataEvents.getByLabel('User.Created', { exact: true }).check();
    expect(await page.getByRole('group', { name: 'User interaction events' }).getByRole('checkbox').count()).to.equal(
      3,
    );
    expect(await page.getByRole('group', { name: 'Exception events' }).getByRole('checkbox').count()).to.equal(2);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit sink' }).waitFor();

    await page.getByRole('button', { name: 'Reveal key' }).click();
    expect(await page.getByTestId('signing-key').textContent()).to.match(/^\w{16,}$/);

    await page.getByRole('button', { name: 'Send test events' }).click();
    await page.getByText('Sent 1 sample event').waitFor();
    expect(receiver.requests).to.have.length(1);
    expect(JSON.parse(receiver.requests[0].body)).to.include({ event: 'User.Created' });
    expect(receiver.requests[0].headers['x-team']).to.equal('identity');

    // A real event: a user created in the console is delivered, and the delivery is listed.
    const hookPath = new URL(page.url()).pathname;
    await openSection(page, 'Users');
    await page.getByLabel('Username').fill('webhook_user');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { level: 1, name: 'webhook_user' }).waitFor();
    await eventually(() => receiver.requests.length === 2, 15_000, 'two deliveries');

    await page.goto(`${session().service.url}${hookPath}`);
    const deliveries = page.getByRole('region', { name: 'Recent attempts' });
    await eventually(
      async () => {
        await deliveries.getByRole('button', { name: 'Refresh' }).click();
        return (await deliveries.getByRole('row').count()) > 1;
      },
      15_000,
      'a row of recent attempts',
    );
    const row = deliveries.getByRole('row').nth(1);
    expect(await row.textContent())
      .to.contain('User.Created')
      .and.contain('Success')
      .and.contain('200');

    // Deleting asks first: Escape keeps the webhook, the dialog's button deletes it.
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await dialog.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    expect(await page.getByRole('link', { name: 'Audit sink' }).count()).to.equal(0);

    expect(session().problems).to.deep.equal([]);
  });

  it('offers Re-send for a failed delivery only, and recovers the failed ones since a time', async () => {
    const { page, service } = session();
    const down = await Receiver.down();
    try {
      const created = await service.api.post('hooks', {
        json: { name: 'Flaky sink', events: ['Role.Created'], config: { url: down.url } },
      });
      const hookId = (created.body as { id: string }).id;
      await service.api.post('roles', { json: { name: 'recovered role', description: 'd' } });
      await eventually(
        async () =>
          ((await service.api.get(`hooks/${hookId}/deliveries?status=failed`)).body as unknown[]).length === 1,
        15_000,
        'the failed delivery',
      );

      await page.goto(`${service.url}/console/webhooks/${hookId}`);
      const deliveries = page.getByRole('region', { name: 'Deliveries' });
      await deliveries.getByRole('row').nth(1).waitFor();
      expect(await deliveries.getByRole('row').nth(1).textContent())
        .to.contain('Role.Created')
        .and.contain('failed');
      expect(await deliveries.getByRole('button', { name: 'Re-send' }).count()).to.equal(1);

      await down.listen();
      // Typed as ISO 8601 in the browser's local time (the browser runs beside the test, in its zone).
      const hourAgo = new Date(Date.now() - 3_600_000 - new Date().getTimezoneOffset() * 60_000);
      await page.getByLabel('Since').fill(hourAgo.toISOString().slice(0, 16));
      await page.getByRole('button', { name: 'Recover failed deliveries' }).click();
      await page.getByText('Recover: done, 1 of 1').waitFor();
      await down.waitFor(1);
      await eventually(
        async () => {
          await deliveries.getByRole('button', { name: 'Refresh' }).click();
          return (await deliveries.getByRole('row').nth(1).textContent())?.includes('succeeded');
        },
        15_000,
        'the re-sent delivery succeeded',
      );
      expect(await deliveries.getByRole('button', { name: 'Re-send' }).count()).to.equal(0);
      expect(session().problems).to.deep.equal([]);
    } finally {
      await down.close();
    }
  });
});
