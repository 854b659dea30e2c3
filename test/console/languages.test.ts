import { expect } from 'chai';
import type { Page } from 'playwright-core';

import { createApplication } from '../support/fixtures.ts';
import { useConsoleSession } from './support.ts';

/**
 * The console speaks the browser's language (of English, German, French, Spanish, Japanese and
 * Simplified Chinese), is switched in place by its "Language" select, and shows and reads dates in
 * the language's own format whatever the browser's locale.
 */
describe('console: languages, the language switcher and dates in the locale', function () {
  this.timeout(120_000);
  const session = useConsoleSession();

  /** The administrator's console in a browser of another language (the session token carried over). */
  async function consoleIn(locale: string | undefined, path = '/') {
    const { page: adminPage, service } = session();
    const stored = await adminPage.evaluate(() => sessionStorage.getItem('console.session'));
    const opened = await session().newPage(undefined, {
      ...(locale && { locale }),
      timezoneId: 'Europe/Berlin',
    });
    if (stored) {
      await opened.page.addInitScript((value) => sessionStorage.setItem('console.session', value), stored);
    }
    await opened.page.goto(`${service.url}/console${path}`);
    return opened;
  }
  const language = (page: Page) => page.evaluate(() => document.documentElement.lang);

  it('in a German browser (de-AT): German navigation and headings, and dates typed and shown as 31.12.2030', async () => {
    const { service } = session();
    const application = await createApplication(service, 'Traditional', { name: 'Bestellungen' });
    const { page, problems } = await consoleIn('de-AT');
    const nav = page.getByRole('navigation', { name: 'Bereiche' });
    await nav.getByRole('link', { name: 'Anwendungen', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Anwendungen' }).waitFor();
    expect(await language(page)).to.equal('de');
    expect(await page.title()).to.equal('Verwaltungskonsole');
    for (const name of ['Dashboard', 'API-Ressourcen', 'Benutzer', 'Audit-Log']) {
      await nav.getByRole('link', { name, exact: true }).waitFor();
    }
    expect(await page.getByLabel('Sprache').inputValue()).to.equal('de');
    await page.getByRole('columnheader', { name: 'Anwendungs-ID' }).waitFor();
    await page
      .getByRole('row', { name: /Bestellungen/ })
      .getByText('Klassische Web-App')
      .waitFor();

    await page.getByRole('link', { name: 'Bestellungen' }).click();
    await page.getByRole('heading', { level: 2, name: 'Zugangsdaten' }).waitFor();
    const form = page.getByRole('form', { name: 'Geheimnis hinzufügen' });
    const expiry = form.getByLabel('Läuft ab (optional)');
    // The placeholder is an example in German order (day.month.year), not the browser's mm/dd/yyyy.
    expect(await expiry.getAttribute('placeholder')).to.match(/^31\.12\.\d{4}, 18:30$/);
    await form.getByLabel('Name des Geheimnisses').fill('rotation');
    await expiry.fill('31.02.2030 18:30');
    await form.getByRole('button', { name: 'Geheimnis hinzufügen' }).click();
    await form.getByText(/^Geben Sie Datum und Uhrzeit so ein: 31\.12\.\d{4}, 18:30\.$/).waitFor();
    expect(await expiry.getAttribute('aria-invalid')).to.equal('true');

    await expiry.fill('31.12.2030 18:30');
    await form.getByRole('button', { name: 'Geheimnis hinzufügen' }).click();
    await page.getByRole('status').filter({ hasText: 'Neues Geheimnis' }).waitFor();
    const secrets = await service.api.get(`applications/${application.id}/secrets`);
    const added = (secrets.body as Array<{ name: string; expiresAt: number | null }>).find(
      (secret) => secret.name === 'rotation',
    );
    // Typed in Berlin's local time: 18:30 in winter is 17:30 UTC.
    expect(added?.expiresAt).to.equal(Date.UTC(2030, 11, 31, 17, 30));
    await page
      .getByRole('table', { name: 'Geheimnisse' })
      .getByRole('row', { name: /rotation/ })
      .getByText('31.12.2030, 18:30')
      .waitFor();

    await page.screenshot({ path: '/tmp/console-i18n-de.png', fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/console-i18n-de-phone.png' });
    expect(problems).to.deep.equal([]);
  });

  it('in a Japanese browser (ja-JP): Japanese navigation and headings, dates as year/month/day', async () => {
    const { service } = session();
    const created = await service.api.post('users', { json: { username: 'yamada', name: '山田 花子' } });
    const { page, problems } = await consoleIn('ja-JP');
    const nav = page.getByRole('navigation', { name: 'セクション' });
    await page.getByRole('heading', { level: 1, name: 'ダッシュボード' }).waitFor();
    expect(await language(page)).to.equal('ja');
    for (const name of ['アプリケーション', 'API リソース', '組織', '監査ログ']) {
      await nav.getByRole('link', { name, exact: true }).waitFor();
    }
    await page.getByRole('button', { name: '過去 7 日間' }).waitFor();

    await nav.getByRole('link', { name: 'ユーザー', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'ユーザー' }).waitFor();
    await page.getByRole('columnheader', { name: '最終サインイン' }).waitFor();
    await page.getByRole('link', { name: '山田 花子' }).click();
    await page.getByRole('heading', { level: 1, name: '山田 花子' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'プロフィール' }).waitFor();
    // The creation time in Japanese order (year/month/day), in Berlin's time.
    const createdAt = new Intl.DateTimeFormat('ja', {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone: 'Europe/Berlin',
    }).format((created.body as { createdAt: number }).createdAt);
    expect(createdAt).to.match(/^\d{4}\/\d{2}\/\d{2} \d{1,2}:\d{2}$/);
    await page.getByText(`作成 ${createdAt}`).waitFor();

    await page.screenshot({ path: '/tmp/console-i18n-ja.png', fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/console-i18n-ja-phone.png' });
    expect(problems).to.deep.equal([]);
  });

  it('switches language in place with the "Language" select, and keeps the choice', async () => {
    const { page, problems } = await consoleIn('en-US', '/applications');
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
    expect(await language(page)).to.equal('en');
    await page.evaluate(() => Object.assign(window, { beforeSwitch: true }));

    await page.getByLabel('Language').selectOption({ label: 'Deutsch' });
    await page.getByRole('heading', { level: 1, name: 'Anwendungen' }).waitFor();
    await page.getByRole('navigation', { name: 'Bereiche' }).getByRole('link', { name: 'Benutzer' }).waitFor();
    expect(await language(page)).to.equal('de');
    // No reload: the page's own state survived the switch.
    expect(await page.evaluate(() => (window as unknown as { beforeSwitch?: boolean }).beforeSwitch)).to.equal(true);

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Anwendungen' }).waitFor();
    await page.getByLabel('Sprache').selectOption({ label: '简体中文' });
    await page.getByRole('heading', { level: 1, name: '应用' }).waitFor();
    expect(await language(page)).to.equal('zh-CN');
    expect(await page.getByLabel('语言').inputValue()).to.equal('zh-CN');
    expect(problems).to.deep.equal([]);
  });

  it('matches the browser to the six: zh-SG is Simplified Chinese, zh-TW falls back to English', async () => {
    const simplified = await consoleIn('zh-SG');
    await simplified.page.getByRole('heading', { level: 1, name: '仪表盘' }).waitFor();
    expect(await language(simplified.page)).to.equal('zh-CN');

    const traditional = await consoleIn('zh-TW');
    await traditional.page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    expect(await language(traditional.page)).to.equal('en');
    await traditional.page.getByRole('navigation', { name: 'Sections' }).waitFor();
    expect([...simplified.problems, ...traditional.problems]).to.deep.equal([]);
  });
});
