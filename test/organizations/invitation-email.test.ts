import { expect } from 'chai';

import { renderInvitationEmail } from '../../lib/messages/built-in-emails.ts';
import { builtInLook } from '../support/email-look.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { freePort, logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { readableMail, type SmtpTestServer, startSmtpServer, subjectOf } from '../support/smtp.ts';
import { ifSet, unique } from '../support/values.ts';
import { type Invitation, type Organization, organizationFixtures } from './support.ts';

type StoredMessage = { recipient: string; type: string; purpose: string; code?: string; link?: string };

const inAnHour = () => Date.now() + 3_600_000;
const acceptLink = (name: string) => `https://app.example.com/invitations/${name}?token=a1b2&lang=en`;

describe('organization invitation emails', () => {
  describe('with SMTP_URL set: through the SMTP connector', () => {
    let smtp: SmtpTestServer;
    let service: TestService;
    let apiClient: ReturnType<typeof logtoManagementClient>;

    before(async () => {
      smtp = await startSmtpServer();
      service = await startService({
        env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SMTP_FROM: 'Acme Accounts <accounts@example.com>' },
      });
      apiClient = logtoManagementClient(service);
    });
    after(async () => {
      await ifSet(service)?.stop();
      await ifSet(smtp)?.stop();
    });

    const mailsTo = (address: string) => smtp.received.filter(({ to }) => to.includes(address));

    it('emails the invitation with its link, the organization (and its logo) and the inviter; resends it with POST /:id/message', async () => {
      const organization = await apiClient.POST('/api/organizations', {
        body: { name: 'Acme Rockets', branding: { logoUrl: 'https://cdn.example.com/acme/logo.png' } },
      });
      const inviter = await apiClient.POST('/api/users', {
        body: { username: unique('ada'), name: 'Ada Lovelace', primaryEmail: `${unique('ada')}@example.com` },
      });
      const invitee = `${unique('guest')}@example.com`;
      const link = acceptLink('first');
      const invitation = await apiClient.POST('/api/organization-invitations', {
        body: {
          inviterId: inviter.data!.id,
          invitee,
          organizationId: organization.data!.id,
          expiresAt: inAnHour(),
          messagePayload: { link, code: 'WELCOME-42' },
        },
      });
      expect(invitation.response.status, JSON.stringify(invitation.error)).to.equal(201);
      expect(invitation.data).to.include({ status: 'Pending', invitee });

      const [mail] = mailsTo(invitee);
      expect(mail, 'an email to the invitee').to.not.equal(undefined);
      expect(mail.from).to.equal('accounts@example.com');
      expect(subjectOf(mail.raw)).to.equal('You are invited to join Acme Rockets');
      const text = readableMail(mail.raw);
      expect(text).to.include('Ada Lovelace invited you to join Acme Rockets.');
      expect(text).to.include(`Accept the invitation: ${link}`);
      expect(text).to.include(`href="${link.replaceAll('&', '&#38;')}"`);
      expect(text).to.include('Your invitation code: WELCOME-42');
      expect(text).to.include('<img src="https://cdn.example.com/acme/logo.png"');
      // Sent, so not kept in the development store.
      expect(
        (await service.api.get('verification-messages', { searchParams: { recipient: invitee } })).body,
      ).to.deep.equal([]);

      const resent = await apiClient.POST('/api/organization-invitations/{id}/message', {
        params: { path: { id: invitation.data!.id } },
        body: { link: acceptLink('second') },
      });
      expect(resent.response.status, JSON.stringify(resent.error)).to.equal(204);
      expect(mailsTo(invitee)).to.have.length(2);
      const second = readableMail(mailsTo(invitee)[1].raw);
      expect(second).to.include(`Accept the invitation: ${acceptLink('second')}`);
      expect(second).to.not.include('invitation code');
    });

    it('says who invites by username or email when the inviter has no name, and no one when there is no inviter', async () => {
      const organization = await service.api.post<Organization>('organizations', { json: { name: 'Beta' } });
      const username = unique('grace');
      const inviter = await service.api.post<{ id: string }>('users', { json: { username } });
      const named = `${unique('guest')}@example.com`;
      const anonymous = `${unique('guest')}@example.com`;
      for (const [invitee, inviterId] of [
        [named, inviter.body.id],
        [anonymous, undefined],
      ] as const) {
        expectStatus(
          await service.api.post('organization-invitations', {
            json: {
              invitee,
              inviterId,
              organizationId: organization.body.id,
              expiresAt: inAnHour(),
              messagePayload: { link: acceptLink('beta') },
            },
          }),
          201,
        );
      }
      expect(readableMail(mailsTo(named)[0].raw)).to.include(`${username} invited you to join Beta.`);
      expect(readableMail(mailsTo(anonymous)[0].raw)).to.include('You are invited to join Beta.');
    });

    it("writes the invitation in messagePayload.locale's language, Japanese and Chinese included", async () => {
      const organization = await service.api.post<Organization>('organizations', { json: { name: 'Gamma' } });
      for (const [locale, subject, accept] of [
        ['ja-JP', 'Gamma への招待', '招待を承諾する: '],
        ['zh-CN', '邀请你加入 Gamma', '接受邀请：'],
        ['es-MX', 'Te han invitado a unirte a Gamma', 'Acepta la invitación: '],
      ]) {
        const invitee = `${unique('guest')}@example.com`;
        const link = acceptLink(locale);
        expectStatus(
          await service.api.post('organization-invitations', {
            json: {
              invitee,
              organizationId: organization.body.id,
              expiresAt: inAnHour(),
              messagePayload: { link, locale },
            },
          }),
          201,
        );
        const [mail] = mailsTo(invitee);
        expect(subjectOf(mail.raw), locale).to.equal(subject);
        expect(readableMail(mail.raw), locale).to.include(`${accept}${link}`);
      }
    });

    it('sends nothing with messagePayload false or absent', async () => {
      const organization = await service.api.post<Organization>('organizations', { json: { name: 'Quiet' } });
      for (const messagePayload of [false, undefined]) {
        const invitee = `${unique('quiet')}@example.com`;
        expectStatus(
          await service.api.post('organization-invitations', {
            json: { invitee, organizationId: organization.body.id, expiresAt: inAnHour(), messagePayload },
          }),
          201,
        );
        expect(mailsTo(invitee)).to.deep.equal([]);
      }
    });
  });

  it('answers 502 connector.general when the mail server is down, and keeps no invitation', async () => {
    const service = await startService({ env: { SMTP_URL: `smtp://127.0.0.1:${await freePort()}` } });
    try {
      const organization = await service.api.post<Organization>('organizations', { json: { name: 'Down' } });
      const invitee = `${unique('down')}@example.com`;
      expectError(
        await service.api.post('organization-invitations', {
          json: {
            invitee,
            organizationId: organization.body.id,
            expiresAt: inAnHour(),
            messagePayload: { link: acceptLink('down') },
          },
        }),
        502,
        'connector.general',
      );
      expect(
        (await service.api.get<Invitation[]>('organization-invitations', { searchParams: { invitee } })).body,
      ).to.deep.equal([]);
      // The address is free: an invitation without the email is created.
      expectStatus(
        await service.api.post('organization-invitations', {
          json: { invitee, organizationId: organization.body.id, expiresAt: inAnHour() },
        }),
        201,
      );
    } finally {
      await service.stop();
    }
  });

  it('answers 501 connector.not_found in production without SMTP_URL, and keeps no invitation', async () => {
    const service = await startService({ env: { NODE_ENV: 'production' } });
    try {
      const organization = await service.api.post<Organization>('organizations', { json: { name: 'Prod' } });
      const invitee = `${unique('prod')}@example.com`;
      expectError(
        await service.api.post('organization-invitations', {
          json: {
            invitee,
            organizationId: organization.body.id,
            expiresAt: inAnHour(),
            messagePayload: { link: acceptLink('prod') },
          },
        }),
        501,
        'connector.not_found',
      );
      expect(
        (await service.api.get<Invitation[]>('organization-invitations', { searchParams: { invitee } })).body,
      ).to.deep.equal([]);
    } finally {
      await service.stop();
    }
  });

  describe('without SMTP_URL: the development message store', () => {
    let service: TestService;
    const fixtures = organizationFixtures(() => service);
    let organization: Organization;

    before(async () => {
      service = await startService();
    });
    after(() => ifSet(service)?.stop());
    beforeEach(async () => {
      organization = await fixtures.createOrganization();
    });

    const stored = async (recipient: string) =>
      (await service.api.get<StoredMessage[]>('verification-messages', { searchParams: { recipient } })).body;

    it('keeps the invitation email, readable at GET /api/verification-messages with its link (and code)', async () => {
      const invitee = `${unique('Dev.Guest')}@Example.com`;
      const created = await service.api.post<Invitation>('organization-invitations', {
        json: {
          invitee,
          organizationId: organization.id,
          expiresAt: inAnHour(),
          messagePayload: { link: acceptLink('dev'), locale: 'de', uiLocales: 'de en' },
        },
      });
      expectStatus(created, 201);
      const [message, ...others] = await stored(invitee);
      expect(others).to.deep.equal([]);
      expect(message).to.deep.include({
        recipient: invitee.toLowerCase(),
        type: 'email',
        purpose: 'OrganizationInvitation',
        link: acceptLink('dev'),
      });
      expect(message).to.not.have.property('code');

      const resent = await service.api.post(`organization-invitations/${created.body.id}/message`, {
        json: { link: acceptLink('again'), code: 'X-1' },
      });
      expectStatus(resent, 204);
      expect((await stored(invitee))[0]).to.deep.include({ link: acceptLink('again'), code: 'X-1' });
    });

    it('refuses a bad messagePayload with 400 guard.invalid_input, creating nothing', async () => {
      const invitee = `${unique('bad')}@example.com`;
      for (const messagePayload of [
        true,
        'yes',
        {},
        { code: '123456' },
        { link: 'not a url' },
        { link: 'javascript:alert(1)' },
        { link: `https://example.com/${'a'.repeat(2048)}` },
        { link: acceptLink('x'), code: '' },
        { link: acceptLink('x'), code: 'c'.repeat(257) },
        { link: acceptLink('x'), template: 'custom' },
      ]) {
        expectError(
          await service.api.post('organization-invitations', {
            json: { invitee, organizationId: organization.id, expiresAt: inAnHour(), messagePayload },
          }),
          400,
          'guard.invalid_input',
        );
      }
      expect(
        (await service.api.get<Invitation[]>('organization-invitations', { searchParams: { invitee } })).body,
      ).to.deep.equal([]);
      expect(await stored(invitee)).to.deep.equal([]);
    });

    it('POST /:id/message: 400 for a bad payload, 404 for an unknown invitation, 422 unless the invitation is pending', async () => {
      const invitee = `${unique('resend')}@example.com`;
      const created = await service.api.post<Invitation>('organization-invitations', {
        json: { invitee, organizationId: organization.id, expiresAt: inAnHour() },
      });
      expectStatus(created, 201);
      const message = (id: string, json: unknown) =>
        service.api.post(`organization-invitations/${id}/message`, { json });

      for (const json of [{}, { link: 'ftp://example.com/x' }, { link: acceptLink('x'), extra: true }, [], 'link']) {
        expectError(await message(created.body.id, json), 400, 'guard.invalid_input');
      }
      expectError(await message('no-such-invitation', { link: acceptLink('x') }), 404, 'entity.not_exists_with_id');

      expectStatus(
        await service.api.put(`organization-invitations/${created.body.id}/status`, { json: { status: 'Revoked' } }),
        200,
      );
      expectError(await message(created.body.id, { link: acceptLink('x') }), 422, 'request.invalid_input');
      expect(await stored(invitee)).to.deep.equal([]);
    });
  });

  it('escapes the names and the link in the HTML part, and keeps the subject on one line', () => {
    const email = renderInvitationEmail(
      {
        to: 'x@example.com',
        type: 'email',
        purpose: 'OrganizationInvitation',
        link: 'https://app.example.com/accept?a=1&b="2"',
        organization: { id: 'o', name: 'Evil <script>alert(1)</script>\r\nBcc: all@example.com', branding: {} },
        inviter: { id: 'u', name: '<b>Mallory</b>', username: null, primaryEmail: null },
      },
      builtInLook(),
    );
    expect(email.subject).to.not.match(/[\r\n]/);
    expect(email.html).to.not.include('<script>').and.not.include('<b>Mallory');
    expect(email.html)
      .to.include('&#60;script&#62;')
      .and.include('href="https://app.example.com/accept?a=1&#38;b=&#34;2&#34;"');
    expect(email.html).to.not.include('<img');
  });
});
