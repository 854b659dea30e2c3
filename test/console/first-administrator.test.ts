import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';

import { Receiver } from '../hooks/receiver.ts';
import { builtScripts, useBuild } from '../support/build.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { startService, type TestService } from '../support/service.ts';

const run = promisify(execFile);

describe('console: the first administrator', () => {
  useBuild();
  let service: TestService | undefined;

  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  it('is created once when requests race; the role it holds opens the management API to users', async () => {
    service = await startService();
    expect((await service.http.get('api/console/config')).body.hasAdministrator).to.equal(false);
    const attempts = await Promise.all(
      ['first_a', 'first_b', 'first_c', 'first_d'].map((username) =>
        service!.http.post('api/console/first-administrator', { json: { username, password: 'Sturdy-Console-7' } }),
      ),
    );
    expect(attempts.map((response) => response.statusCode).sort()).to.deep.equal([201, 409, 409, 409]);
    expect((await service.http.get('api/console/config')).body.hasAdministrator).to.equal(true);
    const created = attempts.find((response) => response.statusCode === 201)!.body;
    const roles = await service.api.get(`users/${created.id}/roles`);
    expect(roles.body.map((role: { id: string }) => role.id)).to.deep.equal(['console-admin']);
  });

  it("sends the same User.Created envelope as the management API's, with the console route's request fields", async () => {
    service = await startService();
    const receiver = await Receiver.start();
    try {
      const hook = await service.api.post('hooks', {
        json: { name: 'created users', events: ['User.Created'], config: { url: receiver.url } },
      });
      expect(hook.statusCode).to.equal(201);
      const first = await service.http.post('api/console/first-administrator', {
        json: { username: 'first_admin', password: 'Sturdy-Console-7' },
        headers: { 'user-agent': 'console-test/1' },
      });
      expect(first.statusCode).to.equal(201);
      const managed = await service.api.post('users', { json: { username: 'managed', password: 'Sturdy-Console-7' } });
      expect(managed.statusCode).to.equal(200);

      const payloads = (await receiver.waitFor(2)).map(
        (request) => JSON.parse(request.body) as Record<string, unknown>,
      );
      const byUser = (id: string) => payloads.find((payload) => (payload.data as { id?: string }).id === id);
      const console = byUser(first.body.id);
      const management = byUser(managed.body.id);
      expect(console, JSON.stringify(payloads)).to.not.equal(undefined);
      expect(Object.keys(console!)).to.deep.equal(Object.keys(management!));
      expect(console).to.include({
        event: 'User.Created',
        path: '/api/console/first-administrator',
        method: 'POST',
        status: 201,
        matchedRoute: '/console/first-administrator',
        userAgent: 'console-test/1',
      });
      expect(console!.params).to.deep.equal({});
      expect(console!.ip).to.be.a('string').and.not.equal('');
      expect(console!.data).to.deep.equal(first.body);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a password the policy refuses, with its issues', async () => {
    service = await startService();
    const response = await service.http.post('api/console/first-administrator', {
      json: { username: 'admin', password: 'abc' },
    });
    expect(response.statusCode).to.equal(422);
    expect(response.body.code).to.equal('password.rejected');
    expect((await service.http.get('api/console/config')).body.hasAdministrator).to.equal(false);
  });

  it('keeps its role and application: the API refuses to change or delete them (403), and holders can still be added', async () => {
    service = await startService();
    const role = await service.api.delete('roles/console-admin');
    expect(role.statusCode).to.equal(403);
    expect(role.body.code).to.equal('role.internal_role_violation');
    expect((await service.api.patch('roles/console-admin', { json: { name: 'renamed' } })).statusCode).to.equal(403);
    expect((await service.api.delete('roles/console-admin/scopes/management-api-all')).statusCode).to.equal(403);
    const application = await service.api.delete('applications/console');
    expect(application.statusCode).to.equal(403);
    expect(application.body.code).to.equal('application.internal_application_violation');
    expect(
      (
        await service.api.patch('applications/console', {
          json: { oidcClientMetadata: { redirectUris: ['https://evil.example/cb'] } },
        })
      ).statusCode,
    ).to.equal(403);

    const scopes = await service.api.get('roles/console-admin/scopes');
    expect(scopes.body.map((scope: { name: string }) => scope.name)).to.deep.equal(['all']);
    const kept = await service.api.get('applications/console');
    expect(kept.body.oidcClientMetadata.redirectUris).to.deep.equal([`${service.url}/console/callback`]);
  });

  it('npm run cli -- create-admin makes an administrator, also when one exists', async () => {
    const dbUrl = await freshDatabaseUrl();
    const env = { ...process.env, DB_URL: dbUrl, LOG_LEVEL: 'silent', ENDPOINT: 'https://id.example.com/identity' };
    for (const username of ['cli_admin', 'cli_admin_2']) {
      const { stdout } = await run(
        process.execPath,
        [builtScripts.cli, 'create-admin', '--username', username, '--password', 'Sturdy-Console-7'],
        { env },
      );
      expect(stdout).to.match(
        new RegExp(
          `^Created administrator ${username} \\(user id \\w+\\)\\. Sign in at https://id\\.example\\.com/identity/console\\n$`,
        ),
      );
    }
    const refused = await run(
      process.execPath,
      [builtScripts.cli, 'create-admin', '--username', 'cli_admin', '--password', 'Sturdy-Console-7'],
      { env },
    ).catch((error: unknown) => error);
    expect(refused).to.include({ code: 1 });
    expect((refused as { stderr: string }).stderr).to.contain('username is already in use');

    service = await startService({ dbUrl });
    const holders = await service.api.get('roles/console-admin/users');
    expect(holders.body.map((user: { username: string }) => user.username).sort()).to.deep.equal([
      'cli_admin',
      'cli_admin_2',
    ]);
  });
});
