import { expect } from 'chai';

import { entityKeyOf } from '../../lib/hooks/delivery/ordering.ts';
import { eventually } from '../support/eventually.ts';
import { type Received, Receiver } from './receiver.ts';
import { createHook, type HooksService, startHooksService } from './support.ts';

const changes = 5;
const bodyOf = (request: Received) =>
  JSON.parse(request.body) as { hookId: string; data: { id: string; name: string } };

describe('hooks: ordered delivery per entity', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService({ env: { HOOKS_RETRY_SCHEDULE: Array(50).fill('0.2').join(',') } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  it('holds back the later events of an entity whose event fails, and only those', async () => {
    const users: Array<{ id: string; label: string }> = [];
    for (const label of ['a', 'b', 'c']) {
      const created = await service.api.post('users', { json: { username: `ordered_${label}` } });
      expect(created.statusCode).to.equal(200);
      users.push({ id: created.body.id, label });
    }
    const [a, ...others] = users;
    const hook = await createHook(service, receiver.url, ['User.Data.Updated'], { ordering: 'per-entity' });
    expect(hook).to.include({ ordering: 'per-entity' });

    // a's third change fails until every change of the others has arrived (and at least twice): the
    // others are not held back by it, or this never ends.
    const delivered = new Set<string>();
    let failures = 0;
    receiver.answer = (request) => {
      const { data } = bodyOf(request);
      const othersDone = others.every((user) => delivered.has(`${user.label}-${changes - 1}`));
      if (data.name === 'a-2' && (!othersDone || failures < 2)) {
        failures += 1;
        return { status: 500 };
      }
      delivered.add(data.name);
      return { status: 200 };
    };

    // Concurrent across users; each user's changes one after another (their commit order).
    await Promise.all(
      users.map(async (user) => {
        for (let index = 0; index < changes; index++) {
          const patched = await service.api.patch(`users/${user.id}`, { json: { name: `${user.label}-${index}` } });
          expect(patched.statusCode).to.equal(200);
        }
      }),
    );
    await eventually(() => delivered.size === users.length * changes, 30_000, 'every change delivered');

    const received = receiver.requests.map(bodyOf).filter((body) => body.hookId === hook.id);
    const names = (label: string) =>
      received.map(({ data }) => data.name).filter((name) => name.startsWith(`${label}-`));
    // Each user's changes in commit order; a-2 tried until it passed, nothing of a's after it sent meanwhile.
    for (const { label } of others) {
      expect(names(label)).to.deep.equal([...Array(changes).keys()].map((index) => `${label}-${index}`));
    }
    expect(failures).to.be.at.least(2);
    expect(names('a')).to.deep.equal(['a-0', 'a-1', ...Array(failures + 1).fill('a-2'), 'a-3', 'a-4']);
    // Everything of the others arrived while a-2 was failing.
    const firstA2 = received.findIndex(({ data }) => data.name === 'a-2');
    const lastA2 = received.length - 1 - [...received].reverse().findIndex(({ data }) => data.name === 'a-2');
    const lastOther = Math.max(...received.map(({ data }, index) => (data.id === a.id ? -1 : index)));
    expect(lastOther).to.be.greaterThan(firstA2);
    expect(lastOther).to.be.lessThan(lastA2);
  });

  it('keys deliveries by the entity their event is about', () => {
    expect(entityKeyOf('User.Data.Updated', { data: { id: 'u1' } })).to.equal('User:u1');
    expect(entityKeyOf('Role.Scopes.Updated', { roleId: 'r1', data: [] })).to.equal('Role:r1');
    expect(entityKeyOf('Organization.Membership.Updated', { organizationId: 'o1' })).to.equal('Organization:o1');
    expect(entityKeyOf('OrganizationRole.Deleted', { data: { id: 'x' } })).to.equal('OrganizationRole:x');
    expect(entityKeyOf('PostSignIn', { userId: 'u1' })).to.equal('User:u1');
    expect(entityKeyOf('Identifier.Lockout', { type: 'email', value: 'a@b' })).to.equal(undefined);
    expect(entityKeyOf('User.Deleted', { data: null, params: { userId: 'u2' } })).to.equal(undefined);
  });
});
