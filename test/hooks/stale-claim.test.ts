import { expect } from 'chai';

import type { ClaimedDelivery } from '../../lib/hooks/delivery/delivery-queries.ts';
import {
  claimByHand,
  createHook,
  deliveryRows,
  type HooksService,
  settleByHand,
  startHooksService,
} from './support.ts';

/**
 * A claim whose lease ran out must not settle its delivery once someone else claimed it, even when
 * the delivery was failed and re-queued meanwhile (its attempts restart at 0, so the new claim has
 * the old one's attempt number).
 */
describe('hooks: a stale claim cannot settle a delivery claimed again', () => {
  let service: HooksService;

  before(async () => {
    service = await startHooksService();
    // The claims are made by hand, at chosen times: the service's dispatcher must not take any.
    await service.dispatcher.stop();
  });
  after(async () => {
    await service.stop();
  });

  const claim = (hookId: string, now: number) => claimByHand(service, hookId, 1, now);
  const settle = (delivery: ClaimedDelivery, statusCode: number, now: number) =>
    settleByHand([delivery], statusCode, now, service);

  it('ignores the settle of a claim taken over, after a failure and a resend', async () => {
    const hook = await createHook(service, 'http://127.0.0.1:9/hook', ['Role.Created']);
    await service.emit('Role.Created', { data: { n: 1 } });
    const [row] = await deliveryRows(service, hook.id);
    const start = Date.now();

    const [stale] = await claim(hook.id, start);
    // Its lease is over: another dispatcher claims it, and gives up on it.
    const [taken] = await claim(hook.id, start + 2000);
    expect(taken.id).to.equal(row.id);
    expect(await settle(taken, 400, start + 2001)).to.deep.equal([true]);

    const resent = await service.api.post(`hooks/${hook.id}/deliveries/${row.id}/resend`);
    expect(resent.statusCode).to.equal(204);
    const [current] = await claim(hook.id, Date.now() + 10);
    expect(current.id).to.equal(row.id);

    // The first dispatcher's request ends at last: its result is not the delivery's.
    expect(await settle(stale, 200, Date.now())).to.deep.equal([false]);
    const [after] = await deliveryRows(service, hook.id);
    expect(after.status).to.equal('delivering');

    expect(await settle(current, 200, Date.now())).to.deep.equal([true]);
    const [settled] = await deliveryRows(service, hook.id);
    expect(settled.status).to.equal('succeeded');
  });
});
