import { expect } from 'chai';

import { openSection, useConsoleSession } from './support.ts';

/** An email template written in the console: previewed in its sandboxed frame with styles, saved, then deleted. */
describe('console: email templates', function () {
  this.timeout(90_000);
  const session = useConsoleSession();

  it('previews a sign-in template with sample values, saves it for the API, and deletes it', async () => {
    const { page, problems, service } = session();
    await openSection(page, 'Email templates');
    await page.getByRole('heading', { name: 'Sign-in code · en' }).waitFor();
    await page.getByLabel('Subject').fill('Acme code {{code}}');
    await page
      .getByLabel('Body', { exact: true })
      .fill('<h1 style="color: rgb(11, 85, 51)">Acme</h1><p>Your code is <strong>{{code}}</strong></p>');
    await page.getByLabel('Sender name (optional)').fill('Acme Security');
    await page.getByRole('button', { name: 'Preview' }).click();

    const preview = page.getByRole('region', { name: 'Preview' });
    expect(await preview.getByTestId('preview-subject').textContent()).to.equal('Acme code 123456');
    const frame = page.frameLocator('iframe[title="Email preview"]');
    await frame.getByText('Your code is 123456').waitFor();
    // The email's own inline style applies in the frame (the console's policy would have stripped it).
    expect(await frame.locator('h1').evaluate((element) => getComputedStyle(element).color)).to.equal(
      'rgb(11, 85, 51)',
    );
    // The frame is sandboxed: no script, an origin of its own.
    expect(await page.locator('iframe[title="Email preview"]').getAttribute('sandbox')).to.equal('');
    // In view: headless Chromium leaves an out-of-process frame blank in a full-page capture.
    await page.locator('iframe[title="Email preview"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/console-email-templates.png' });

    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const stored = (await service.api.get('email-templates', { searchParams: { templateType: 'SignIn' } })).body;
    expect(stored).to.have.length(1);
    expect(stored[0]).to.deep.include({ languageTag: 'en', templateType: 'SignIn' });
    expect(stored[0].details).to.include({ subject: 'Acme code {{code}}', sendFrom: 'Acme Security' });
    await page.getByRole('cell', { name: 'Acme code {{code}}' }).waitFor();

    // A bad template is refused, and the console says why.
    await page.getByLabel('Body', { exact: true }).fill('<a href="{{{link}}}">x</a>');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'unescaped' }).waitFor();

    await page.getByRole('button', { name: 'Delete template' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete template' }).click();
    await page.getByText('No template saved: the built-in email is sent.').waitFor();
    expect((await service.api.get('email-templates')).body).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it('shows the preview document only in a frame of the console', async () => {
    const { service } = session();
    const direct = await service.http.post('console/email-preview', {
      form: { html: '<p>phish</p>' },
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'document' },
    });
    expect(direct.statusCode).to.equal(403);
    expect(direct.body).to.not.include('phish');
  });
});
