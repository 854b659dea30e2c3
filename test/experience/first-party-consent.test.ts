import { expect } from 'chai';

import { expectStatus } from '../support/expect.ts';
import type { TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { Browser } from './browser.ts';
import {
  createUser,
  identify,
  passwordVerification,
  redirectUri,
  type SignInSetting,
  startSignInSetting,
} from './experience-helpers.ts';

/**
 * A first-party application's consent prompt (`prompt=consent`, which Logto's SDK always sends) as
 * Logto answers it, the hop Logto's own test client checks: after the sign-in, /oidc/auth sends the
 * browser to `/consent?app_id=<id>` (303), which consents on the person's behalf and sends it back to
 * /oidc/auth (303), which sends it to the application with a code. No consent page is shown.
 */
describe('First-party consent at GET /consent', () => {
  let setting: SignInSetting;
  let service: TestService;
  let spa: { id: string };
  const password = 'Granite-Kestrel-64';

  before(async () => {
    setting = await startSignInSetting();
    ({ service, spa } = setting);
  });
  after(() => ifSet(setting)?.stop());

  async function signedIn(extra: Record<string, string>): Promise<{ browser: Browser; redirectTo: string }> {
    const username = unique('consent');
    await createUser(service, { username, password });
    const browser = new Browser(service);
    const { location } = await browser.authorize(spa.id, redirectUri, extra);
    expect(location).to.equal('/sign-in');
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    const submitted = await browser.call('post', 'api/experience/submit');
    expectStatus(submitted, 200);
    return { browser, redirectTo: submitted.body.redirectTo };
  }

  const get = (browser: Browser, url: string) =>
    browser.client.get(url.replace(service.config.endpoint, service.url).replace(`${service.url}/`, ''), {
      responseType: 'text',
    });

  it('prompt=consent: /oidc/auth → /consent?app_id → /oidc/auth → the application, each a 303', async () => {
    const { browser, redirectTo } = await signedIn({ prompt: 'consent' });
    const resumed = await get(browser, redirectTo);
    expect(resumed.statusCode).to.equal(303);
    expect(resumed.headers.location).to.equal(`/consent?app_id=${spa.id}`);

    const consented = await get(browser, resumed.headers.location!.slice(1));
    expect(consented.statusCode).to.equal(303);
    expect(consented.headers.location).to.match(new RegExp(`^${service.config.endpoint}/oidc/auth/`));

    const back = await get(browser, consented.headers.location!);
    expect(back.statusCode).to.equal(303);
    const landed = new URL(back.headers.location!);
    expect(landed.origin + landed.pathname).to.equal(redirectUri);
    expect(landed.searchParams.get('code')).to.be.a('string');
  });

  it('without prompt=consent the provider goes straight to the application', async () => {
    const { browser, redirectTo } = await signedIn({});
    const resumed = await get(browser, redirectTo);
    expect(resumed.statusCode).to.equal(303);
    expect(new URL(resumed.headers.location!).searchParams.get('code')).to.be.a('string');
  });

  it('GET /consent without an interaction waiting for consent is the consent page', async () => {
    const page = await new Browser(service).client.get('consent', { responseType: 'text' });
    expect(page.statusCode).to.be.oneOf([200, 503]);
    expect(page.headers['content-type']).to.match(/^text\/(html|plain)/);
  });
});
