import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { createSpa, newEmail, redirectUri } from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { type HttpResponse, logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { readableMail, type ReceivedMail, type SmtpTestServer, startSmtpServer, subjectOf } from '../support/smtp.ts';
import { ifSet, unique } from '../support/values.ts';

type Details = { subject: string; content: string; contentType?: string; replyTo?: string; sendFrom?: string };
type Template = {
  tenantId: string;
  id: string;
  languageTag: string;
  templateType: string;
  details: Details;
  createdAt: number;
};

/** The decoded part of a received email with this content type (`text/html`, `text/plain`), if it has one. */
function partOf(mail: ReceivedMail, contentType: string): string | undefined {
  const readable = readableMail(mail.raw);
  const part = readable.split(/\r?\n--[^\r\n]+\r?\n/).find((chunk) => chunk.includes(`Content-Type: ${contentType}`));
  return part
    ?.split(/\r?\n\r?\n/)
    .slice(1)
    .join('\n\n');
}

const signInHtml = [
  '<!doctype html><html><body>',
  '<h1 style="color: #0b5">Acme</h1>',
  '<p>Your Acme sign-in code is <strong>{{code}}</strong>.</p>',
  '<p>It works for {{expiresInMinutes}} minutes.</p>',
  '</body></html>',
].join('\n');

describe('email templates', () => {
  let smtp: SmtpTestServer;
  let service: TestService;
  let apiClient: ReturnType<typeof logtoManagementClient>;
  let spa: { id: string };

  before(async () => {
    smtp = await startSmtpServer();
    service = await startService({
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SMTP_FROM: 'Accounts <accounts@example.com>' },
    });
    apiClient = logtoManagementClient(service);
    spa = await createSpa(service);
  });
  after(async () => {
    await ifSet(service)?.stop();
    await ifSet(smtp)?.stop();
  });

  const mailsTo = (address: string) => smtp.received.filter(({ to }) => to.includes(address));

  /** A sign-in page sends a code to `email` for `event`; returns the email received and the verification id. */
  async function sendCode(email: string, event: 'SignIn' | 'Register' | 'ForgotPassword') {
    const browser = new Browser(service);
    await browser.authorize(spa.id, redirectUri);
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: event }), 204);
    const sent = await browser.call('post', 'api/experience/verification/verification-code', {
      identifier: { type: 'email', value: email },
      interactionEvent: event,
    });
    expectStatus(sent, 200);
    const mail = mailsTo(email).at(-1);
    expect(mail, `an email to ${email}`).to.not.equal(undefined);
    return { browser, mail: mail!, verificationId: sent.body.verificationId as string };
  }

  const replace = (templates: Array<{ languageTag: string; templateType: string; details: Details }>) =>
    service.api.put<Template[]>('email-templates', { json: { templates } });

  afterEach(async () => {
    for (const template of (await service.api.get<Template[]>('email-templates')).body) {
      expectStatus(await service.api.delete(`email-templates/${template.id}`), 204);
    }
  });

  it("sends the operator's sign-in template (Logto's client saves it), and the emailed code verifies", async () => {
    const saved = await apiClient.PUT('/api/email-templates', {
      body: {
        templates: [
          {
            languageTag: 'en',
            templateType: 'SignIn',
            details: {
              subject: 'Acme sign-in code: {{code}}',
              content: signInHtml,
              contentType: 'text/html',
              sendFrom: 'Acme Security',
              replyTo: 'help@acme.example',
            },
          },
        ],
      },
    });
    expect(saved.response.status, JSON.stringify(saved.error)).to.equal(200);
    const [template] = saved.data!;
    expect(template).to.include({ tenantId: 'default', languageTag: 'en', templateType: 'SignIn' });
    expect(template.details.subject).to.equal('Acme sign-in code: {{code}}');

    const email = newEmail('template');
    const { browser, mail, verificationId } = await sendCode(email, 'SignIn');
    const code = /Acme sign-in code: (\d{6})$/.exec(subjectOf(mail.raw) ?? '')?.[1];
    expect(code, subjectOf(mail.raw)).to.match(/^\d{6}$/);
    expect(mail.from).to.equal('accounts@example.com');
    expect(mail.raw).to.match(/^From: Acme Security <accounts@example\.com>\r?$/m);
    expect(mail.raw).to.match(/^Reply-To: help@acme\.example\r?$/m);
    const html = partOf(mail, 'text/html')!;
    expect(html).to.include(`<p>Your Acme sign-in code is <strong>${code}</strong>.</p>`);
    expect(html).to.include('<h1 style="color: #0b5">Acme</h1>');
    expect(html).to.include('It works for 10 minutes.');
    // A text part made from the HTML, for mail clients that show text.
    expect(partOf(mail, 'text/plain')).to.include(`Your Acme sign-in code is ${code}.`);

    const verified = await browser.call('post', 'api/experience/verification/verification-code/verify', {
      identifier: { type: 'email', value: email },
      verificationId,
      code,
    });
    expectStatus(verified, 200);
  });

  it('falls back to the Generic template, then to the built-in email once the templates are deleted', async () => {
    expectStatus(
      await replace([
        {
          languageTag: 'en',
          templateType: 'Generic',
          details: { subject: 'Your Acme code', content: 'Code: {{code}}', contentType: 'text/plain' },
        },
      ]),
      200,
    );
    const registering = newEmail('generic');
    const { mail } = await sendCode(registering, 'Register');
    expect(subjectOf(mail.raw)).to.equal('Your Acme code');
    expect(partOf(mail, 'text/html'), 'a text/plain template sends no HTML part').to.equal(undefined);
    expect(partOf(mail, 'text/plain') ?? readableMail(mail.raw)).to.match(/Code: \d{6}/);

    const deleted = await service.api.delete('email-templates', { searchParams: { templateType: 'Generic' } });
    expectStatus(deleted, 200);
    expect(deleted.body).to.deep.equal({ rowCount: 1 });
    const { mail: builtIn } = await sendCode(newEmail('builtin'), 'Register');
    expect(subjectOf(builtIn.raw)).to.equal('Your registration code');
  });

  it("escapes variables in the HTML body, keeps the subject one line, and picks the invitation's language", async () => {
    expectStatus(
      await replace([
        {
          languageTag: 'en',
          templateType: 'OrganizationInvitation',
          details: { subject: 'Join {{organization.name}}', content: '<p>English</p>' },
        },
        {
          languageTag: 'fr',
          templateType: 'OrganizationInvitation',
          details: {
            subject: 'Rejoignez {{organization.name}}',
            content:
              '<p>{{#inviter}}{{inviter.name}} vous invite à rejoindre {{/inviter}}{{organization.name}}</p>' +
              '<p><a href="{{link}}">Accepter</a></p>',
          },
        },
      ]),
      200,
    );
    const organization = await service.api.post('organizations', {
      json: { name: '<script>alert(1)</script> & Co\r\nBcc: thief@example.com' },
    });
    expectStatus(organization, 201);
    const inviter = await service.api.post('users', { json: { username: unique('ines'), name: 'Inès "Boss"' } });
    const invitee = `${unique('guest')}@example.com`;
    const link = 'https://app.example.com/accept?token=a1&lang=fr';
    const invited = await service.api.post('organization-invitations', {
      json: {
        inviterId: inviter.body.id,
        invitee,
        organizationId: organization.body.id,
        expiresAt: Date.now() + 3_600_000,
        messagePayload: { link, locale: 'fr-CA' },
      },
    });
    expectStatus(invited, 201);

    const [mail] = mailsTo(invitee);
    expect(mail.to).to.deep.equal([invitee], 'no Bcc header made from the name');
    const headers = mail.raw.split(/\r?\n\r?\n/)[0];
    expect(headers).to.not.match(/^Bcc:/im);
    expect(subjectOf(mail.raw)).to.equal('Rejoignez <script>alert(1)</script> & Co Bcc: thief@example.com');
    const html = partOf(mail, 'text/html')!;
    expect(html).to.include(
      '<p>Inès &quot;Boss&quot; vous invite à rejoindre &lt;script&gt;alert(1)&lt;&#x2F;script&gt; &amp; Co',
    );
    expect(html).to.not.include('<script>');
    expect(html).to.include('<a href="https:&#x2F;&#x2F;app.example.com&#x2F;accept?token&#x3D;a1&amp;lang&#x3D;fr">');
  });

  it('answers GET, PATCH and DELETE by id, and filters the list', async () => {
    const saved = await replace([
      { languageTag: 'en', templateType: 'SignIn', details: { subject: 'A {{code}}', content: '<p>{{code}}</p>' } },
      { languageTag: 'de', templateType: 'SignIn', details: { subject: 'B {{code}}', content: '<p>{{code}}</p>' } },
    ]);
    expectStatus(saved, 200);
    const [english] = saved.body;

    const listed = await service.api.get<Template[]>('email-templates', { searchParams: { languageTag: 'de' } });
    expect(listed.body.map((template) => template.languageTag)).to.deep.equal(['de']);
    expect((await service.api.get(`email-templates/${english.id}`)).body).to.deep.equal(english);

    // PUT again: the same row, its details replaced.
    const again = await replace([
      { languageTag: 'en', templateType: 'SignIn', details: { subject: 'C {{code}}', content: '<p>{{code}}</p>' } },
    ]);
    expect(again.body[0]).to.include({ id: english.id, createdAt: english.createdAt });
    const patched = await service.api.patch<Template>(`email-templates/${english.id}/details`, {
      json: { subject: 'D {{code}}' },
    });
    expectStatus(patched, 200);
    expect(patched.body.details).to.deep.equal({ subject: 'D {{code}}', content: '<p>{{code}}</p>' });

    expectError(await service.api.get('email-templates/nope'), 404, 'entity.not_exists_with_id');
    expectError(
      await service.api.patch('email-templates/nope/details', { json: {} }),
      404,
      'entity.not_exists_with_id',
    );
    expectError(await service.api.delete('email-templates'), 422, 'connector.email_connector.bulk_deletion_no_filter');
    expectStatus(await service.api.delete(`email-templates/${english.id}`), 204);
    expectError(await service.api.delete(`email-templates/${english.id}`), 404, 'entity.not_exists_with_id');
  });

  it('refuses bad templates with 400 naming the field, and stores nothing', async () => {
    const cases: Array<[unknown, string, RegExp?]> = [
      [{ subject: 'x', content: '{{#code}}never closed' }, 'templates.0.details.content', /Unclosed section/],
      [{ subject: 'x', content: '<a href="{{{link}}}">' }, 'templates.0.details.content', /unescaped/],
      [{ subject: 'x', content: '{{&link}}' }, 'templates.0.details.content', /unescaped/],
      [{ subject: 'x', content: '{{> header}}' }, 'templates.0.details.content', /partial/],
      [{ subject: 'x {{code', content: 'y' }, 'templates.0.details.subject', /Unclosed tag/],
      [{ subject: '  ', content: 'y' }, 'templates.0.details.subject'],
      [{ subject: 'x', content: 'y', contentType: 'application/json' }, 'templates.0.details.contentType'],
      [{ subject: 'x', content: 'y', replyTo: 'not an address' }, 'templates.0.details.replyTo'],
      [{ subject: 'x', content: 'y', extra: 1 }, 'templates.0.details.extra'],
      [{ subject: 'x' }, 'templates.0.details.content'],
    ];
    for (const [details, path, message] of cases) {
      const response: HttpResponse = await service.api.put('email-templates', {
        json: { templates: [{ languageTag: 'en', templateType: 'SignIn', details }] },
      });
      expectError(response, 400, 'guard.invalid_input');
      const detail = (response.body.details as Array<{ path: string; message: string }>).find(
        (item) => item.path === path,
      );
      expect(detail, `${JSON.stringify(details)}: ${JSON.stringify(response.body.details)}`).to.not.equal(undefined);
      if (message) {
        expect(detail!.message).to.match(message);
      }
    }
    const other = [
      { languageTag: 'en', templateType: 'Welcome', details: { subject: 'x', content: 'y' } },
      { languageTag: 'english please', templateType: 'SignIn', details: { subject: 'x', content: 'y' } },
    ];
    for (const template of other) {
      expectError(await replace([template]), 400, 'guard.invalid_input');
    }
    expectError(await service.api.put('email-templates', { json: { templates: [] } }), 400, 'guard.invalid_input');
    const twice = { languageTag: 'en', templateType: 'SignIn', details: { subject: 'x', content: 'y' } };
    expectError(await replace([twice, twice]), 400, 'guard.invalid_input');
    expect((await service.api.get('email-templates')).body).to.deep.equal([]);
  });

  it('previews a template with sample variables, escaped as they would be sent', async () => {
    const preview = await service.api.post('email-templates/preview', {
      json: {
        templateType: 'OrganizationInvitation',
        details: {
          subject: 'Join {{organization.name}}',
          content: '<p>{{inviter.name}} invites you to {{organization.name}}</p>',
        },
      },
    });
    expectStatus(preview, 200);
    expect(preview.body).to.deep.equal({
      subject: 'Join Acme & Sons <Sample>',
      html: '<p>Jane Doe invites you to Acme &amp; Sons &lt;Sample&gt;</p>',
      text: 'Jane Doe invites you to Acme & Sons <Sample>',
    });
    expectError(
      await service.api.post('email-templates/preview', {
        json: { templateType: 'SignIn', details: { subject: 'x', content: '{{/code}}' } },
      }),
      400,
      'guard.invalid_input',
    );
  });
});
