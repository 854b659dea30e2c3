import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';

import { buildIfStale, builtScripts, useBuild } from '../support/build.ts';
import { launchChromium, skipWithoutChromium } from '../support/chromium.ts';
import { startService, type TestService } from '../support/service.ts';

const run = promisify(execFile);

const newAdmin = (username: string) => ({ username, password: 'Sturdy-Console-7' });
/** What a proxy on this host adds for a browser elsewhere. */
const fromAfar = { 'x-forwarded-for': '203.0.113.7' };

/** The setup tokens a production service printed at start (one per start while the first run is open). */
function printedTokens(service: TestService): string[] {
  return [...service.notices().matchAll(/"setupToken":"([\w-]+)"/g)].map((match) => match[1]);
}

describe('console: who may create the first administrator', () => {
  useBuild();
  const started: TestService[] = [];
  const start = async (options: Parameters<typeof startService>[0]) => {
    const service = await startService(options);
    started.push(service);
    return service;
  };

  afterEach(async () => {
    await Promise.all(started.splice(0).map((service) => service.stop()));
  });

  it('a request from afar without the setup token gets 403; one from this machine gets 201', async () => {
    const service = await start({ env: { TRUST_PROXY: 'true' } });
    const config = await service.http.get('api/console/config', { headers: fromAfar });
    expect(config.body).to.include({ hasAdministrator: false, firstRun: 'setup-token' });
    expect((await service.http.get('api/console/config')).body.firstRun).to.equal('local');

    const refused = await service.http.post('api/console/first-administrator', {
      json: newAdmin('stranger'),
      headers: fromAfar,
    });
    expect(refused.statusCode).to.equal(403);
    expect(refused.body.code).to.equal('console.setup_token_required');
    // A chain the client began itself (it claims loopback; the proxy appended the real address) is still from afar.
    const spoofed = await service.http.post('api/console/first-administrator', {
      json: newAdmin('stranger'),
      headers: { 'x-forwarded-for': '127.0.0.1, 203.0.113.7' },
    });
    expect(spoofed.statusCode).to.equal(403);
    expect((await service.http.get('api/console/config')).body.hasAdministrator).to.equal(false);

    // A browser on this machine, directly or through the proxy on this machine.
    const local = await service.http.post('api/console/first-administrator', {
      json: newAdmin('local_admin'),
      headers: { 'x-forwarded-for': '127.0.0.1' },
    });
    expect(local.statusCode).to.equal(201);
    expect((await service.http.get('api/console/config')).body).to.include({
      hasAdministrator: true,
      firstRun: 'closed',
    });
  });

  it('without TRUST_PROXY, a forwarded request is never local, whatever address it names', async () => {
    const service = await start({});
    const forwardedAs: Array<Record<string, string>> = [
      { 'x-forwarded-for': '127.0.0.1' },
      { forwarded: 'for=127.0.0.1' },
      { 'x-real-ip': '127.0.0.1' },
    ];
    for (const headers of forwardedAs) {
      expect((await service.http.get('api/console/config', { headers })).body.firstRun).to.equal('setup-token');
      const refused = await service.http.post('api/console/first-administrator', {
        json: newAdmin('proxied'),
        headers,
      });
      expect(refused.statusCode, JSON.stringify(headers)).to.equal(403);
      expect(refused.body.code).to.equal('console.setup_token_required');
    }
  });

  it('the setup token printed at start lets a remote request in once; reused or wrong, 403', async () => {
    const service = await start({ env: { NODE_ENV: 'production', TRUST_PROXY: 'true' } });
    const [token] = printedTokens(service);
    expect(token).to.be.a('string');
    // One structured line on the notices stream (stderr), nothing of it in the log.
    expect(service.notices().trim().split('\n')).to.have.length(1);

    const wrong = await service.http.post('api/console/first-administrator', {
      json: { ...newAdmin('remote_admin'), setupToken: 'not-the-token' },
      headers: fromAfar,
    });
    expect(wrong.statusCode).to.equal(403);
    expect(wrong.body.code).to.equal('console.setup_token_invalid');
    // A refused password does not spend the token.
    const weak = await service.http.post('api/console/first-administrator', {
      json: { username: 'remote_admin', password: 'abc', setupToken: token },
      headers: fromAfar,
    });
    expect(weak.statusCode).to.equal(422);

    const created = await service.http.post('api/console/first-administrator', {
      json: { ...newAdmin('remote_admin'), setupToken: token },
      headers: fromAfar,
    });
    expect(created.statusCode).to.equal(201);
    expect(created.body.username).to.equal('remote_admin');

    const reused = await service.http.post('api/console/first-administrator', {
      json: { ...newAdmin('second_admin'), setupToken: token },
      headers: fromAfar,
    });
    expect(reused.statusCode).to.equal(403);
    expect(reused.body.code).to.equal('console.setup_token_invalid');
  });

  it("in production a request naming the public ENDPOINT's host is not local: a proxy on this machine relayed it", async () => {
    // A reverse proxy that adds no forwarding header connects from loopback; the Host it passes on is
    // the public name, which a browser on this machine has no reason to use.
    const service = await start({ env: { NODE_ENV: 'production', ENDPOINT: 'https://id.example.com' } });
    for (const host of ['id.example.com', 'ID.example.com', 'id.example.com:443']) {
      const config = await service.http.get('api/console/config', { headers: { host } });
      expect(config.body.firstRun, host).to.equal('setup-token');
      const refused = await service.http.post('api/console/first-administrator', {
        json: newAdmin('relayed'),
        headers: { host },
      });
      expect(refused.statusCode, host).to.equal(403);
      expect(refused.body.code).to.equal('console.setup_token_required');
    }
    // This machine's own address is still local.
    const port = new URL(service.url).port;
    expect((await service.http.get('api/console/config')).body.firstRun).to.equal('local');
    const local = await service.http.post('api/console/first-administrator', {
      json: newAdmin('local_admin'),
      headers: { host: `localhost:${port}` },
    });
    expect(local.statusCode).to.equal(201);
  });

  it('in production the first run closes for good once an administrator existed, even from this machine and in another instance; the CLI still works', async () => {
    const service = await start({ env: { NODE_ENV: 'production' } });
    expect(printedTokens(service)).to.have.length(1);
    const created = await service.http.post('api/console/first-administrator', { json: newAdmin('prod_admin') });
    expect(created.statusCode).to.equal(201);
    expect((await service.api.delete(`users/${created.body.id}`)).statusCode).to.equal(204);

    const config = await service.http.get('api/console/config');
    expect(config.body).to.include({ hasAdministrator: false, firstRun: 'closed' });
    const again = await service.http.post('api/console/first-administrator', { json: newAdmin('prod_admin_2') });
    expect(again.statusCode).to.equal(403);
    expect(again.body.code).to.equal('console.first_run_closed');

    // Another instance on the same database: closed too, and it prints no setup token.
    const other = await start({ dbUrl: service.config.dbUrl, env: { NODE_ENV: 'production' } });
    expect(printedTokens(other)).to.deep.equal([]);
    expect(
      (await other.http.post('api/console/first-administrator', { json: newAdmin('prod_admin_3') })).statusCode,
    ).to.equal(403);

    const env = { ...process.env, DB_URL: service.config.dbUrl, NODE_ENV: 'production', LOG_LEVEL: 'silent' };
    const { stdout } = await run(
      process.execPath,
      [builtScripts.cli, 'create-admin', '--username', 'cli_admin', '--password', 'Sturdy-Console-7'],
      { env },
    );
    expect(stdout).to.contain('Created administrator cli_admin');
    expect(
      (await other.api.get('roles/console-admin/users')).body.map((user: { username: string }) => user.username),
    ).to.deep.equal(['cli_admin']);
  });

  it('an administrator made through the management API closes the production first run as well', async () => {
    const service = await start({ env: { NODE_ENV: 'production' } });
    const user = await service.api.post('users', { json: { username: 'api_admin' } });
    expect(
      (await service.api.post(`users/${user.body.id}/roles`, { json: { roleIds: ['console-admin'] } })).statusCode,
    ).to.equal(201);
    expect((await service.api.delete(`users/${user.body.id}`)).statusCode).to.equal(204);
    const refused = await service.http.post('api/console/first-administrator', { json: newAdmin('late_admin') });
    expect(refused.statusCode).to.equal(403);
    expect(refused.body.code).to.equal('console.first_run_closed');
  });

  it('the console asks a browser on another machine for the setup token', async function () {
    skipWithoutChromium(this);
    this.timeout(60_000);
    buildIfStale();
    const service = await start({ env: { NODE_ENV: 'production', TRUST_PROXY: 'true' } });
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      // As the proxy on the service's machine tells it: the browser is elsewhere.
      await context.setExtraHTTPHeaders(fromAfar);
      const page = await context.newPage();
      await page.goto(`${service.url}/console`);
      await page.getByRole('heading', { name: 'Create the first administrator' }).waitFor();
      await page.getByLabel('Setup token').fill('not-the-token');
      await page.getByLabel('Username').fill('remote_admin');
      await page.getByLabel('Password').fill('Sturdy-Console-7');
      await page.getByRole('button', { name: 'Create administrator' }).click();
      await page.getByText('This setup token is not valid').waitFor();

      await page.getByLabel('Setup token').fill(printedTokens(service)[0]);
      await page.getByRole('button', { name: 'Create administrator' }).click();
      await page.getByText('The administrator is created.').waitFor();
      expect(
        (await service.api.get('roles/console-admin/users')).body.map((user: { username: string }) => user.username),
      ).to.deep.equal(['remote_admin']);
    } finally {
      await browser.close();
    }
  });
});
