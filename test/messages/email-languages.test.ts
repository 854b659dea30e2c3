import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { newEmail, redirectUri } from '../experience/experience-helpers.ts';
import { expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { readableMail, type SmtpTestServer, startSmtpServer, subjectOf } from '../support/smtp.ts';
import { ifSet } from '../support/values.ts';

/**
 * The emails a sign-in sends, in its language: the built-in email in the page's language (the
 * application's ui_locales, the browser's Accept-Language), with the sign-in experience's logo and
 * colour and the application's name; an operator's template gets `{{application.name}}` and `{{locale}}`.
 */
describe('emails in the sign-in’s language and branding', () => {
  let smtp: SmtpTestServer;
  let service: TestService;
  let clientId: string;

  before(async () => {
    smtp = await startSmtpServer();
    service = await startService({
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SMTP_FROM: 'Accounts <accounts@example.com>' },
    });
    clientId = (
      await createApplication(service, 'SPA', {
        name: 'Acme Notes',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      })
    ).id;
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: {
          branding: { logoUrl: 'https://acme.example/logo.png' },
          color: { primaryColor: '#0f766e', isDarkModeEnabled: false, darkPrimaryColor: '#5eead4' },
        },
      }),
      200,
    );
  });
  after(async () => {
    await ifSet(service)?.stop();
    await ifSet(smtp)?.stop();
  });

  /** Asks for a sign-in code from a sign-in started with `extra` parameters; the email received. */
  async function codeEmail(extra: Record<string, string>, acceptLanguage?: string) {
    const email = newEmail('language');
    const browser = new Browser(service);
    await browser.authorize(clientId, redirectUri, extra);
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const response = await browser.client('api/experience/verification/verification-code', {
      method: 'post',
      json: { identifier: { type: 'email', value: email }, interactionEvent: 'SignIn' },
      ...(acceptLanguage && { headers: { 'accept-language': acceptLanguage } }),
    });
    expectStatus(response, 200);
    const mail = smtp.received.filter(({ to }) => to.includes(email)).at(-1);
    expect(mail, `an email to ${email}`).to.not.equal(undefined);
    return { subject: subjectOf(mail!.raw), text: readableMail(mail!.raw) };
  }

  it('sends the built-in code email in the language the application asked for, branded, naming it', async () => {
    const german = await codeEmail({ ui_locales: 'de' });
    expect(german.subject).to.equal('Ihr Anmeldecode');
    expect(german.text)
      .to.include('Melden Sie sich mit diesem Code an:')
      .and.include('Sie haben ihn angefordert, um sich bei Acme Notes anzumelden.')
      .and.include('src="https://acme.example/logo.png"')
      .and.include('#0f766e')
      .and.include('lang="de"');

    const french = await codeEmail({ ui_locales: 'fr-CA' });
    expect(french.subject).to.equal('Votre code de connexion');

    const japanese = await codeEmail({ ui_locales: 'ja' });
    expect(japanese.subject).to.equal('サインイン用のコード');
    expect(japanese.text)
      .to.include('サインインには次のコードを使ってください:')
      .and.include('Acme Notes へのサインインのためにリクエストされました。')
      .and.include('lang="ja"');

    const chinese = await codeEmail({ ui_locales: 'zh-Hans' });
    expect(chinese.subject).to.equal('你的登录验证码');
    expect(chinese.text).to.include('你请求此验证码是为了登录 Acme Notes。').and.include('lang="zh-CN"');
  });

  it("follows the browser's Accept-Language when the application names no language", async () => {
    expect((await codeEmail({}, 'fr-FR,fr;q=0.9')).subject).to.equal('Votre code de connexion');
    expect((await codeEmail({}, 'es-419')).subject).to.equal('Tu código de inicio de sesión');
    expect((await codeEmail({}, 'zh-TW')).subject).to.equal('Your sign-in code');
  });

  it('uses custom phrases in the built-in email', async () => {
    expectStatus(
      await service.api.put('custom-phrases/de', { json: { email: { signIn: { subject: 'Ihr Acme-Code' } } } }),
      201,
    );
    try {
      expect((await codeEmail({ ui_locales: 'de' })).subject).to.equal('Ihr Acme-Code');
    } finally {
      await service.api.delete('custom-phrases/de');
    }
  });

  it("fills an operator's template with the application and the language, in that language's template", async () => {
    const templates = [
      { languageTag: 'en', subject: 'Code for {{application.name}} ({{locale}})' },
      { languageTag: 'de', subject: 'Ihr Code bei {{application.name}} ({{locale}})' },
    ].map(({ languageTag, subject }) => ({
      languageTag,
      templateType: 'SignIn',
      details: { subject, content: 'Code: {{code}}', contentType: 'text/plain' },
    }));
    expectStatus(await service.api.put('email-templates', { json: { templates } }), 200);
    try {
      expect((await codeEmail({ ui_locales: 'de' })).subject).to.equal('Ihr Code bei Acme Notes (de)');
      expect((await codeEmail({ ui_locales: 'fr' })).subject).to.equal('Code for Acme Notes (fr)');
    } finally {
      expectStatus(await service.api.delete('email-templates', { searchParams: { templateType: 'SignIn' } }), 200);
    }
  });
});
