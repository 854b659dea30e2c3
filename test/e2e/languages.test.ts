import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { type BrowserContext, type Page } from 'playwright-core';

import { en } from '../../lib/shared/phrases/en.ts';
import { buildIfStale } from '../support/build.ts';
import { launchChromium, screenshotAtWidths, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { startApplication } from './support.ts';

/**
 * The hosted pages' languages in Chromium: the application's `ui_locales` chooses the language,
 * then the browser's Accept-Language, then the sign-in experience's fallback; an operator's custom
 * phrase replaces the catalogue's text. No page shows a catalogue key.
 *
 * E2E_SCREENSHOTS=<folder> saves the sign-in page in each language at laptop and phone widths.
 */

/** What the sign-in page says in each shipped language: its title, its button and the application's line. */
const expected = {
  en: { title: 'Sign in', identifier: 'Username or email', signInTo: 'Sign in to Acme Notes' },
  de: { title: 'Anmelden', identifier: 'Benutzername oder E-Mail', signInTo: 'Bei Acme Notes anmelden' },
  fr: { title: 'Se connecter', identifier: 'Nom d’utilisateur ou e-mail', signInTo: 'Se connecter à Acme Notes' },
  es: {
    title: 'Iniciar sesión',
    identifier: 'Nombre de usuario o correo electrónico',
    signInTo: 'Inicia sesión en Acme Notes',
  },
  ja: { title: 'サインイン', identifier: 'ユーザー名またはメールアドレス', signInTo: 'Acme Notes にサインイン' },
  'zh-CN': { title: '登录', identifier: '用户名或邮箱', signInTo: '登录 Acme Notes' },
};

/** What an empty form says of its first field, and the register page's heading. */
const invalid = {
  en: 'Enter your username',
  de: 'Geben Sie Ihren Benutzernamen',
  fr: 'Saisissez votre nom',
  es: 'Escribe tu nombre de usuario',
  ja: 'ユーザー名またはメールアドレスを入力してください。',
  'zh-CN': '请输入用户名或邮箱地址。',
};
const registerTitle = {
  en: 'Create an account',
  de: 'Konto erstellen',
  fr: 'Créer un compte',
  es: 'Crear una cuenta',
  ja: 'アカウントを作成',
  'zh-CN': '创建账号',
};

const missingKey = new RegExp(`\\b(${Object.keys(en).join('|')})\\.\\w`);

describe('the hosted pages in several languages, in Chromium', function () {
  this.timeout(90_000);

  let service: TestService;
  let application: Awaited<ReturnType<typeof startApplication>>;
  let browser: TestBrowser;
  let callback: string;
  let clientId: string;
  const contexts: BrowserContext[] = [];

  before(async function () {
    skipWithoutChromium(this);
    buildIfStale();
    service = await startService();
    application = await startApplication();
    callback = `${application.origin}/callback`;
    clientId = (
      await createApplication(service, 'SPA', {
        name: 'Acme Notes',
        oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [] },
      })
    ).id;
    browser = await launchChromium();
  });

  after(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await ifSet(browser)?.close();
    ifSet(application)?.server.close();
    await ifSet(service)?.stop();
  });

  async function newPage(locale?: string): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...(locale && { locale }) });
    contexts.push(context);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    return { page, problems };
  }

  function authorization(extra: Record<string, string> = {}) {
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: callback,
      response_type: 'code',
      scope: 'openid profile',
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    });
    return `${service.url}/oidc/auth?${query}`;
  }

  /** At phone width no text runs out of the card (a long German word would). */
  async function expectNoOverflow(page: Page) {
    await page.setViewportSize({ width: 320, height: 700 });
    const overflowing = await page.evaluate(() =>
      [...document.querySelectorAll('main *')]
        .filter(
          (element) =>
            element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).overflowX === 'visible',
        )
        .map((element) => element.outerHTML.slice(0, 80)),
    );
    expect(overflowing).to.deep.equal([]);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  async function screenshot(page: Page, name: string) {
    await expectNoOverflow(page);
    await screenshotAtWidths(page, name);
  }

  /** The sign-in page shows `language`'s texts, under `<html lang>`, and no catalogue key. */
  async function expectSignInPage(page: Page, language: keyof typeof expected) {
    const texts = expected[language];
    await page.locator('#sign-in-to').getByText(texts.signInTo, { exact: true }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).to.equal(language);
    expect(await page.locator('h1').textContent()).to.equal(texts.title);
    expect(await page.title()).to.equal(texts.title);
    await page.getByLabel(texts.identifier).waitFor();
    // A missing key shows as its dotted path (`signIn.submit`); none may appear.
    expect(await page.locator('main').innerText()).not.to.match(missingKey);
  }

  for (const language of Object.keys(expected) as (keyof typeof expected)[]) {
    it(`shows the sign-in page in ${language} when the application asks for it (ui_locales)`, async () => {
      // The browser prefers another language: the application's ui_locales wins.
      const { page, problems } = await newPage(language === 'en' ? 'de-DE' : 'en-US');
      await page.goto(authorization({ ui_locales: `xx ${language}` }));
      await expectSignInPage(page, language);
      // Errors come from the catalogue too: an empty form names the field in the language.
      await page.getByRole('button', { name: expected[language].title, exact: true }).click();
      await page.locator('main').getByText(invalid[language]).first().waitFor();
      await page.reload();
      await expectSignInPage(page, language);
      await screenshot(page, `languages-sign-in-${language}`);
      // The register page, whose hints are the longest texts of a first visit.
      await page.locator('main a[href^="/register"]').click();
      await page.locator('h1').getByText(registerTitle[language]).waitFor();
      await screenshot(page, `languages-register-${language}`);
      expect(problems).to.deep.equal([]);
    });
  }

  it("follows the browser's Accept-Language without ui_locales, then the fallback language", async () => {
    const german = await newPage('de-AT');
    await german.page.goto(authorization());
    await expectSignInPage(german.page, 'de');

    // A regional tag finds its language; Chinese finds its script.
    for (const [locale, language] of [
      ['ja-JP', 'ja'],
      ['es-MX', 'es'],
      ['zh-SG', 'zh-CN'],
    ] as const) {
      const regional = await newPage(locale);
      await regional.page.goto(authorization());
      await expectSignInPage(regional.page, language);
    }

    // Traditional Chinese is not shown Simplified, nor Italian anything but the fallback.
    for (const locale of ['zh-TW', 'it-IT']) {
      const unknown = await newPage(locale);
      await unknown.page.goto(authorization());
      await expectSignInPage(unknown.page, 'en');
    }

    // Without auto-detection, the browser's languages are not asked: the fallback language is used.
    const patched = await service.api.patch('sign-in-exp', {
      json: { languageInfo: { autoDetect: false, fallbackLanguage: 'fr' } },
    });
    expect(patched.statusCode, JSON.stringify(patched.body)).to.equal(200);
    try {
      const french = await newPage('de-DE');
      await french.page.goto(authorization());
      await expectSignInPage(french.page, 'fr');
    } finally {
      await service.api.patch('sign-in-exp', { json: { languageInfo: { autoDetect: true, fallbackLanguage: 'en' } } });
    }
  });

  it("shows an operator's custom phrase in place of the catalogue's", async () => {
    const saved = await service.api.put('custom-phrases/de', {
      json: { signIn: { submit: 'Los geht’s' }, brand: { signInTo: 'Willkommen bei {{application}}' } },
    });
    expect(saved.statusCode, JSON.stringify(saved.body)).to.equal(201);
    try {
      const { page } = await newPage('en-US');
      await page.goto(authorization({ ui_locales: 'de' }));
      await page.locator('#sign-in-to').getByText('Willkommen bei Acme Notes', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Los geht’s', exact: true }).waitFor();
      // What the custom phrases leave out stays the catalogue's.
      await page.getByLabel('Benutzername oder E-Mail').waitFor();
      expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    } finally {
      await service.api.delete('custom-phrases/de');
    }
  });

  it("shows custom phrases holding $&, $`, $' and $1 literally, the page whole", async () => {
    // Patterns a string replacement would expand (the matched text, what precedes or follows it).
    const submit = "Go $& $` $' $1 $$";
    const noScript = "Turn on JavaScript $' $&";
    const saved = await service.api.put('custom-phrases/en', {
      json: { signIn: { submit }, page: { noScript } },
    });
    expect(saved.statusCode, JSON.stringify(saved.body)).to.equal(201);
    try {
      const html = await service.http.get('sign-in', { responseType: 'text' });
      expect(html.body.match(/<\/html>/g)).to.have.length(1);
      expect(html.body).to.include(`<p class="notice">${noScript.replaceAll('&', '&amp;')}</p>`);
      const { page, problems } = await newPage('en-US');
      await page.goto(authorization());
      await page.getByRole('button', { name: submit, exact: true }).waitFor();
      await expectSignInPage(page, 'en');
      expect(await page.locator('main').innerText()).not.to.include('<script');
      expect(problems).to.deep.equal([]);
    } finally {
      await service.api.delete('custom-phrases/en');
    }
  });

  for (const [locale, language, heading, support] of [
    ['fr-FR', 'fr', 'Cette application est inconnue', 'Pour l’assistance'],
    ['ja-JP', 'ja', 'このアプリケーションは登録されていません', 'サポート用の情報'],
  ]) {
    it(`shows the provider's error page in the browser's language (${language})`, async () => {
      const { page, problems } = await newPage(locale);
      await page.goto(`${service.url}/oidc/auth?client_id=nobody&response_type=code&scope=openid`);
      await page.getByRole('heading', { name: heading }).waitFor();
      expect(await page.locator('html').getAttribute('lang')).to.equal(language);
      await page.getByText(support).waitFor();
      await screenshot(page, `languages-error-page-${language}`);
      expect(problems).to.deep.equal([]);
    });
  }
});
