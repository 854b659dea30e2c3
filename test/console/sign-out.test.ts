import { expect } from 'chai';

import { eventually } from '../support/eventually.ts';
import { useConsoleSession } from './support.ts';

/**
 * Signing out of the console takes one click, ends the provider's session and revokes the
 * administrator's management token (RFC 7009).
 */
describe('console: signing out in one click revokes the token', function () {
  this.timeout(90_000);
  const session = useConsoleSession();

  it('one click signs out: no confirmation, the token the console held is refused after', async () => {
    const { page, service } = session();
    const stored = await page.evaluate(() => sessionStorage.getItem('console.session'));
    const token = (JSON.parse(stored!) as { accessToken: string }).accessToken;
    const list = () => service.http.get('api/applications', { headers: { authorization: `Bearer ${token}` } });
    expect((await list()).statusCode).to.equal(200);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${service.url}/console`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The provider's session ended too: signing in again asks for the password.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in');
    await page.getByLabel('Password', { exact: true }).waitFor();

    // The revocation was sent (keepalive) as the page left; it has landed well before now, but poll briefly rather than assume.
    const response = await eventually(
      async () => {
        const listed = await list();
        return listed.statusCode !== 200 && listed;
      },
      2000,
      'the token refused',
    );
    expect(response.statusCode).to.equal(401);
    expect(response.body.message).to.match(/revoked/);
    expect(session().problems).to.deep.equal([]);
  });
});
