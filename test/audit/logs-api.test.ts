import { expect } from 'chai';

import {
  createSpa,
  createUser,
  latestCode,
  newEmail,
  openExperience,
  passwordVerification,
  sendCode,
  verifyCode,
  wrongCode,
} from '../experience/experience-helpers.ts';
import { createApplication } from '../support/fixtures.ts';
import { adminClient, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { type AuditEntry, waitForLog } from './support.ts';

describe('GET /api/logs: filters, names, and no secrets', () => {
  let service: TestService;

  before(async () => {
    service = await startService();
  });
  after(() => ifSet(service)?.stop());

  const list = async (query: Record<string, string | number>) => {
    const response = await service.api.get('logs', { searchParams: { page_size: 100, ...query } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body as AuditEntry[];
  };

  it('never shows a secret: passwords, application secrets, codes, tokens', async () => {
    const userPassword = 'Hidden-Password-93';
    const application = await createApplication(service, 'MachineToMachine');
    expect(application.secret).to.be.a('string').and.not.equal('');
    const user = await createUser(service, {
      username: 'secret_keeper',
      primaryEmail: newEmail('keeper'),
      password: userPassword,
    });
    expect(
      (await service.api.patch(`users/${user.id}/password`, { json: { password: `${userPassword}-2` } })).statusCode,
    ).to.equal(200);
    const hook = await service.api.post('hooks', {
      json: { name: 'audit hook', events: ['User.Created'], config: { url: 'https://hooks.example.com/in' } },
    });
    expect(hook.body.signingKey).to.be.a('string').and.not.equal('');
    const subjectToken = await service.api.post('subject-tokens', { json: { userId: user.id } });
    expect(subjectToken.statusCode).to.equal(201);

    const spa = await createSpa(service);
    const browser = await openExperience(service, spa.id);
    await passwordVerification(browser, { type: 'username', value: 'secret_keeper' }, 'Guessed-Password-12');
    const sent = await sendCode(browser, user.primaryEmail!, 'SignIn');
    const code = await latestCode(service, user.primaryEmail!);
    await verifyCode(browser, user.primaryEmail!, sent.body.verificationId, wrongCode(code));
    await waitForLog(
      service,
      { result: 'Error' },
      (entry) => entry.payload.error?.code === 'verification_code.code_mismatch',
    );
    await waitForLog(service, { logKey: 'Management.Write' }, (entry) => entry.payload.route === '/api/subject-tokens');

    const secrets = [
      userPassword,
      `${userPassword}-2`,
      'Guessed-Password-12',
      application.secret,
      hook.body.signingKey,
      String(subjectToken.body.subjectToken),
      code,
      wrongCode(code),
    ];
    const entries = await list({});
    expect(entries.length).to.be.greaterThan(5);
    const shown =
      JSON.stringify(entries) +
      JSON.stringify(await Promise.all(entries.map(async ({ id }) => (await service.api.get(`logs/${id}`)).body)));
    for (const secret of secrets) {
      expect(shown, 'a secret in the audit log').to.not.include(secret);
    }
  });

  it('filters by key, key prefix, result, actor, target and time; refuses bad filters', async () => {
    const before = Date.now();
    const user = await createUser(service, { username: 'filter_target' });
    expect((await service.api.patch(`users/${user.id}`, { json: { name: 'Filtered' } })).statusCode).to.equal(200);
    expect((await service.api.patch('users/missing-user', { json: { name: 'x' } })).statusCode).to.equal(404);
    const about = await waitForLog(
      service,
      { targetId: user.id },
      (entry) => entry.payload.route === '/api/users/:userId',
    );

    const targeted = await list({ targetId: user.id });
    expect(targeted.map((entry) => entry.payload.route).sort()).to.deep.equal(['/api/users', '/api/users/:userId']);
    expect(targeted.every((entry) => entry.key === 'Management.Write')).to.equal(true);
    expect(about.names[user.id]).to.equal('filter_target');
    expect(about.names[adminClient.id]).to.equal('Bootstrap admin');

    await waitForLog(service, { result: 'Error' }, (entry) => entry.payload.params?.userId === 'missing-user');
    const errors = await list({ result: 'Error', logKey: 'Management.Write' });
    expect(errors.length).to.be.greaterThan(0);
    expect(errors.every((entry) => entry.payload.result === 'Error')).to.equal(true);
    const successes = await list({ result: 'Success', logKeyPrefix: 'Management.' });
    expect(successes.length).to.be.greaterThan(0);
    expect(
      successes.every((entry) => entry.payload.result === 'Success' && entry.key.startsWith('Management.')),
    ).to.equal(true);

    const byApplication = await list({ applicationId: adminClient.id, start_time: before });
    expect(byApplication.length).to.be.at.least(3);
    expect(
      byApplication.every((entry) => entry.payload.applicationId === adminClient.id && entry.createdAt >= before),
    ).to.equal(true);
    expect(await list({ applicationId: adminClient.id, end_time: before - 60_000 })).to.deep.equal([]);
    expect(await list({ logKeyPrefix: 'Nothing.' })).to.deep.equal([]);
    // A prefix is a prefix: LIKE's wildcards in it match only themselves.
    expect(await list({ logKeyPrefix: '%' })).to.deep.equal([]);

    const paged = await service.api.get('logs', {
      searchParams: { logKey: 'Management.Write', page: 1, page_size: 1 },
    });
    expect(paged.body).to.have.length(1);
    expect(Number(paged.headers['total-number'])).to.be.greaterThan(1);

    const bads: Array<Record<string, string | number>> = [
      { result: 'Maybe' },
      { page_size: 1000 },
      { start_time: 'yesterday' },
      { start_time: 10, end_time: 5 },
      { targetId: 'x'.repeat(200) },
    ];
    for (const bad of bads) {
      const response = await service.api.get('logs', { searchParams: bad });
      expect(response.statusCode, JSON.stringify(bad)).to.equal(400);
      expect(response.body.code).to.equal('guard.invalid_input');
    }
  });

  it('documents its filters in the OpenAPI document', async () => {
    const document = (await service.http.get('api/swagger.json')).body;
    const names = document.paths['/api/logs'].get.parameters.map((parameter: { name: string }) => parameter.name);
    expect(names).to.include.members([
      'logKey',
      'logKeyPrefix',
      'userId',
      'applicationId',
      'targetId',
      'result',
      'start_time',
      'end_time',
      'page',
      'page_size',
    ]);
  });
});
