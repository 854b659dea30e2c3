import { expect } from 'chai';

import { useConsoleSession } from './support.ts';

/** Signing out of the console revokes the administrator's management token (RFC 7009), not only the session. */
describe('console: signing out revokes the token', function () {
  this.timeout(90_000);
  const session = useConsoleSession();

  it('the token the console held is refused after sign-out', async () => {
    const { page, service } = session();
    const stored = await page.evaluate(() => sessionStorage.getItem('console.session'));
    const token = (JSON.parse(stored!) as { accessToken: string }).accessToken;
    const list = () => service.http.get('api/applications', { headers: { authorization: `Bearer ${token}` } });
    expect((await list()).statusCode).to.equal(200);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: /^Sign out of / }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${service.url}/console`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();

    // The revocation was sent (keepalive) as the page left; it has landed well before now, but poll briefly rather than assume.
    let response = await list();
    for (let tries = 0; response.statusCode === 200 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await list();
    }
    expect(response.statusCode).to.equal(401);
    expect(response.body.message).to.match(/revoked/);
    expect(session().problems).to.deep.equal([]);
  });
});
