import { expect } from 'chai';

import { expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

type Kept = { purpose: string; locale?: string; template?: { subject: string; content: string }; link?: string };

/** The development store (no SMTP) keeps what an email would have been written from: its language and template. */
describe('development messages: the language and the template of a kept email', () => {
  let service: TestService;

  const kept = async (recipient: string) =>
    (await service.api.get('verification-messages', { searchParams: { recipient } })).body as Kept[];
  const invite = async (organizationId: string, invitee: string, locale: string) =>
    expectStatus(
      await service.api.post('organization-invitations', {
        json: {
          invitee,
          organizationId,
          expiresAt: Date.now() + 3_600_000,
          messagePayload: { link: 'https://app.example.com/accept', locale },
        },
      }),
      201,
    );

  before(async () => {
    service = await startService();
  });
  after(() => ifSet(service)?.stop());

  it('names the locale asked and the template chosen, the default language where there is none', async () => {
    const english = { subject: 'Join {{organization.name}}', content: '<p>English</p>' };
    const german = { subject: 'Treten Sie {{organization.name}} bei', content: '<p>Deutsch</p>' };
    expectStatus(
      await service.api.put('email-templates', {
        json: {
          templates: [
            { languageTag: 'en', templateType: 'OrganizationInvitation', details: english },
            { languageTag: 'de', templateType: 'OrganizationInvitation', details: german },
          ],
        },
      }),
      200,
    );
    const organization = (await service.api.post('organizations', { json: { name: unique('org') } })).body;

    const toGerman = `${unique('de')}@example.com`;
    await invite(organization.id, toGerman, 'de');
    const [de] = await kept(toGerman);
    expect(de).to.deep.include({ purpose: 'OrganizationInvitation', locale: 'de', template: german });

    const toFrench = `${unique('fr')}@example.com`;
    await invite(organization.id, toFrench, 'fr');
    const [fr] = await kept(toFrench);
    expect(fr).to.deep.include({ locale: 'fr', template: english });

    // Without templates, a kept email names none.
    expectStatus(
      await service.api.delete('email-templates', { searchParams: { templateType: 'OrganizationInvitation' } }),
      200,
    );
    const toPlain = `${unique('plain')}@example.com`;
    await invite(organization.id, toPlain, 'en');
    const [plain] = await kept(toPlain);
    expect(plain).to.not.have.property('template');
    expect(plain).to.include({ locale: 'en' });
  });
});
