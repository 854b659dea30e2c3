import { expect } from 'chai';

import {
  createSpa,
  identify,
  openExperience,
  submitToApplication,
  verifyEmail,
} from '../experience/experience-helpers.ts';
import { Receiver } from '../hooks/receiver.ts';
import { eventually } from '../support/eventually.ts';
import { startService, type TestService } from '../support/service.ts';

describe('organizations: just-in-time membership by email domain', () => {
  let service: TestService;
  let receiver: Receiver;
  let organization: { id: string };
  let role: { id: string };
  const domain = `acme-${Date.now().toString(36)}.test`;

  before(async () => {
    service = await startService();
    receiver = await Receiver.start();
    await service.api.post('hooks', {
      json: { name: 'membership', events: ['Organization.Membership.Updated'], config: { url: receiver.url } },
    });
    organization = (await service.api.post('organizations', { json: { name: 'Acme' } })).body;
    role = (await service.api.post('organization-roles', { json: { name: `acme-member-${Date.now()}` } })).body;
    await service.api.put(`organizations/${organization.id}/jit/email-domains`, { json: { emailDomains: [domain] } });
    await service.api.put(`organizations/${organization.id}/jit/roles`, { json: { organizationRoleIds: [role.id] } });
  });
  after(async () => {
    await service.stop();
    await receiver.close();
  });

  const membersOf = async () =>
    (await service.api.get(`organizations/${organization.id}/users`)).body as Array<{
      id: string;
      organizationRoles: Array<{ id: string }>;
    }>;

  const membershipEventFor = (userId: string) =>
    eventually(
      () =>
        receiver.requests
          .map((request) => JSON.parse(request.body))
          .find((body) => body.addedUserIds?.includes(userId)),
      5000,
      `a membership event adding ${userId}`,
    );

  it('makes a user who registers with a verified email of the domain a member, with the JIT roles', async () => {
    await service.api.patch('sign-in-exp', {
      json: { signUp: { identifiers: ['email'], password: false, verify: true } },
    });
    const spa = await createSpa(service);
    const browser = await openExperience(service, spa.id, 'Register');
    const email = `new.hire@${domain}`;
    const verificationId = await verifyEmail(service, browser, email, 'Register');
    const created = await identify(browser, { verificationId });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(201);
    await submitToApplication(browser);

    const user = (
      (await service.api.get('users', { searchParams: { 'search.primaryEmail': email } })).body as Array<{ id: string }>
    )[0];
    const member = (await membersOf()).find(({ id }) => id === user.id);
    expect(member?.organizationRoles.map(({ id }) => id)).to.deep.equal([role.id]);
    expect(await membershipEventFor(user.id)).to.include({
      event: 'Organization.Membership.Updated',
      organizationId: organization.id,
    });
  });

  it('leaves a user of another domain out', async () => {
    const spa = await createSpa(service);
    const browser = await openExperience(service, spa.id, 'Register');
    const verificationId = await verifyEmail(service, browser, `someone@elsewhere-${Date.now()}.test`, 'Register');
    const created = await identify(browser, { verificationId });
    expect(created.statusCode).to.equal(201);
    const before = (await membersOf()).length;
    await submitToApplication(browser);
    expect((await membersOf()).length).to.equal(before);
  });
});
