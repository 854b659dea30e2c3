import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';

import { configColumns } from '../../lib/config-transfer/tables.ts';
import { managementApi } from '../../lib/shared/management-api.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { builtScripts, useBuild } from '../support/build.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { createResource, defaultSecretOf } from '../support/fixtures.ts';
import { adminClient, type HttpResponse, startService, type TestService } from '../support/service.ts';

const folder = mkdtempSync(join(tmpdir(), 'identity-transfer-'));
const fileIn = (name: string) => join(folder, name);
const newKey = () => randomBytes(32).toString('base64');

type Run = { code: number; stdout: string; stderr: string };

/** `npm run --silent cli -- <args>` as an operator runs it: the build, against DB_URL. */
async function cli(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [builtScripts.cli, ...args], {
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SECRETS_'))),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stdout, stderr };
}

function ok<T>(response: HttpResponse<T>): T {
  expect(response.statusCode, JSON.stringify(response.body)).to.be.within(200, 299);
  return response.body;
}

/** A database set up through the API with one of everything the file holds, and what a test checks it by. */
async function configure(service: TestService) {
  const api = service.api;
  const orders = await createResource(service, ['read:orders', 'write:orders']);
  ok(await api.patch(`resources/${orders.resource.id}`, { json: { accessTokenTtl: 600 } }));
  ok(await api.patch(`resources/${orders.resource.id}/is-default`, { json: { isDefault: true } }));
  const billing = await createResource(service, ['read:billing']);
  ok(
    await api.post('roles', {
      json: {
        name: 'Order reader',
        description: 'reads orders',
        type: 'User',
        scopeIds: [orders.scopeIds['read:orders']],
      },
    }),
  );
  const worker = ok(
    await api.post('roles', {
      json: {
        name: 'Order worker',
        description: 'machines that write orders',
        type: 'MachineToMachine',
        scopeIds: [orders.scopeIds['write:orders'], billing.scopeIds['read:billing']],
      },
    }),
  );
  ok(
    await api.post('applications', {
      json: {
        name: 'Shop',
        type: 'SPA',
        oidcClientMetadata: {
          redirectUris: ['https://shop.example.com/callback'],
          postLogoutRedirectUris: ['https://shop.example.com'],
        },
        customData: { team: 'web', tier: 2 },
      },
    }),
  );
  const created = ok(
    await api.post('applications', {
      json: { name: 'Order sync', type: 'MachineToMachine', description: 'nightly sync' },
    }),
  );
  const machine = { ...created, secret: await defaultSecretOf(service, created.id) };
  ok(await api.post(`applications/${machine.id}/roles`, { json: { roleIds: [worker.id, 'management-api-access'] } }));
  const namedSecret = ok(
    await api.post(`applications/${machine.id}/secrets`, {
      json: { name: 'ci pipeline', expiresAt: Date.now() + 86_400_000 },
    }),
  );
  const web = ok(
    await api.post('applications', {
      json: {
        name: 'Back office',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: ['https://office.example.com/cb'], postLogoutRedirectUris: [] },
        customClientMetadata: { allowTokenExchange: true, idTokenTtl: 900 },
      },
    }),
  );
  ok(
    await api.patch(`applications/${web.id}`, {
      json: { oidcClientMetadata: { logoUri: 'https://office.example.com/logo.png' } },
    }),
  );

  const readOrgs = ok(
    await api.post('organization-scopes', { json: { name: 'read:members', description: 'see the members' } }),
  );
  const member = ok(
    await api.post('organization-roles', {
      json: {
        name: 'member',
        description: 'a member',
        organizationScopeIds: [readOrgs.id],
        resourceScopeIds: [orders.scopeIds['read:orders']],
      },
    }),
  );
  const robot = ok(await api.post('organization-roles', { json: { name: 'robot', type: 'MachineToMachine' } }));
  ok(await api.patch('account-center', { json: { fields: { name: 'ReadOnly', email: 'Edit' } } }));
  const partner = ok(
    await api.post('applications', {
      json: {
        name: 'Partner portal',
        type: 'Traditional',
        isThirdParty: true,
        oidcClientMetadata: { redirectUris: ['https://partner.example.com/cb'], postLogoutRedirectUris: [] },
      },
    }),
  );
  expect(
    (
      await api.post(`applications/${partner.id}/user-consent-scopes`, {
        json: {
          organizationScopes: [readOrgs.id],
          resourceScopes: [orders.scopeIds['read:orders']],
          organizationResourceScopes: [orders.scopeIds['write:orders']],
          userScopes: ['profile', 'email'],
        },
      })
    ).statusCode,
  ).to.equal(201);
  const sso = ok(
    await api.post('sso-connectors', {
      json: {
        providerName: 'OIDC',
        connectorName: 'Acme workforce',
        domains: ['acme.example'],
        config: {
          issuer: 'https://login.acme.example',
          clientId: 'acme-client',
          clientSecret: 'acme-sso-secret-0123456789',
        },
      },
    }),
  );
  const social = ok(
    await api.post('connectors', {
      json: {
        connectorId: 'oidc',
        config: {
          // Saved only if its IdP answers: the service itself, an OpenID issuer.
          issuer: service.config.issuer,
          clientId: 'social-client',
          clientSecret: 'social-secret-0123456789',
        },
        metadata: { target: 'social-idp', name: { en: 'Social' } },
      },
    }),
  );
  const acme = ok(
    await api.post('organizations', {
      json: {
        name: 'Acme',
        description: 'a customer',
        customData: { plan: 'gold' },
        branding: { logoUrl: 'https://acme.example/logo.svg' },
        color: { primaryColor: '#0a84ff' },
        customCss: 'body { margin: 0 }',
      },
    }),
  );
  ok(await api.post(`organizations/${acme.id}/jit/email-domains`, { json: { emailDomain: 'acme.example' } }));
  ok(await api.post(`organizations/${acme.id}/jit/roles`, { json: { organizationRoleIds: [member.id] } }));
  ok(await api.post(`organizations/${acme.id}/jit/sso-connectors`, { json: { ssoConnectorIds: [sso.id] } }));
  ok(await api.post(`organizations/${acme.id}/applications`, { json: { applicationIds: [machine.id] } }));
  ok(
    await api.post(`organizations/${acme.id}/applications/${machine.id}/roles`, {
      json: { organizationRoleIds: [robot.id] },
    }),
  );
  const hook = ok(
    await api.post('hooks', {
      json: {
        name: 'audit sink',
        events: ['User.Created', 'Role.Created'],
        config: { url: 'https://hooks.example.com/in', headers: { 'x-team': 'ops' } },
      },
    }),
  );
  // A hook with every delivery setting away from its default.
  ok(
    await api.post('hooks', {
      json: {
        name: 'sync service',
        events: ['User.Data.Updated'],
        config: { url: 'https://sync.example.com/in' },
        signatureScheme: 'ed25519',
        payload: 'thin',
        excludeApplicationIds: [machine.id],
        ordering: 'per-entity',
        rateLimitPerSecond: 20,
        notifyEmail: 'ops@example.com',
      },
    }),
  );
  const trustedIssuer = ok(
    await api.post('trusted-issuers', {
      json: {
        name: 'Partner',
        issuer: 'https://partner.example.com',
        jwksUri: 'https://partner.example.com/jwks',
        audience: 'https://api.example.com',
        algorithms: ['ES256'],
        userMapping: { claim: 'sub', by: 'identity', connectorId: social.id },
        applicationIds: [machine.id, web.id],
      },
    }),
  );
  ok(await api.put('custom-phrases/de', { json: { signIn: { submit: 'Los' } } }));
  ok(
    await api.put('email-templates', {
      json: {
        templates: [
          {
            languageTag: 'en',
            templateType: 'SignIn',
            details: { subject: 'Your code {{code}}', content: '<p>{{code}}</p>', replyTo: 'help@example.com' },
          },
        ],
      },
    }),
  );
  const settings = ok(await api.get('sign-in-exp'));
  ok(
    await api.patch('sign-in-exp', {
      json: {
        passwordPolicy: { ...settings.passwordPolicy, length: { min: 12, max: 256 } },
        supportEmail: 'help@example.com',
      },
    }),
  );
  // Not configuration: users are not exported.
  ok(await api.post('users', { json: { username: 'not_exported', password: 'Sturdy-Password-42' } }));

  return { orders, billing, machine, namedSecret, hook, sso, social, trustedIssuer };
}

describe('configuration export and import (npm run cli -- export / import)', function () {
  useBuild();

  let source: TestService;
  let sourceEnv: Record<string, string>;
  let world: Awaited<ReturnType<typeof configure>>;

  before(async () => {
    const key = newKey();
    // The CLI runs with the service's environment (its BOOTSTRAP_ADMIN_CLIENT_ID application is not exported).
    sourceEnv = {
      DB_URL: await freshDatabaseUrl(),
      SECRETS_ENCRYPTION_KEY: key,
      BOOTSTRAP_ADMIN_CLIENT_ID: adminClient.id,
      BOOTSTRAP_ADMIN_CLIENT_SECRET: adminClient.secret,
    };
    source = await startService({ dbUrl: sourceEnv.DB_URL, env: { SECRETS_ENCRYPTION_KEY: key } });
    world = await configure(source);
  });
  after(() => source.stop());

  it('exports what was configured, without secrets, users or built-in rows, and the same bytes each time', async () => {
    const first = await cli(sourceEnv, 'export');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stderr).to.equal('');
    const file = JSON.parse(first.stdout);
    expect(file.version).to.equal(1);
    // Lists in creation order (two made in the same millisecond go by id).
    expect(file.resources.map((resource: { id: string }) => resource.id)).to.have.members([
      world.orders.resource.id,
      world.billing.resource.id,
    ]);
    const orders = file.resources.find((resource: { id: string }) => resource.id === world.orders.resource.id);
    expect(orders).to.include({ isDefault: true, accessTokenTtl: 600 });
    expect(orders.scopes.map((scope: { name: string }) => scope.name)).to.have.members(['read:orders', 'write:orders']);
    expect(file.roles.map((role: { name: string }) => role.name)).to.have.members(['Order reader', 'Order worker']);
    const machine = file.applications.find((application: { id: string }) => application.id === world.machine.id);
    expect(machine.roleIds).to.include('management-api-access');
    expect(machine).to.not.have.property('secret');
    expect(file.applications.map((application: { name: string }) => application.name)).to.have.members([
      'Shop',
      'Order sync',
      'Back office',
      'Partner portal',
    ]);
    expect(file.accountCenter).to.deep.equal({ enabled: true, fields: { name: 'ReadOnly', email: 'Edit' } });
    expect(file.applicationConsentScopes).to.have.length(1);
    expect(file.applicationConsentScopes[0]).to.deep.include({
      organizationResourceScopeIds: [world.orders.scopeIds['write:orders']],
      userScopes: ['email', 'profile'],
    });
    const roleId = (name: string) => file.organizationRoles.find((role: { name: string }) => role.name === name).id;
    expect(file.organizations[0]).to.deep.include({
      branding: { logoUrl: 'https://acme.example/logo.svg' },
      color: { primaryColor: '#0a84ff' },
      customCss: 'body { margin: 0 }',
      applications: [{ id: world.machine.id, organizationRoleIds: [roleId('robot')] }],
      jit: { emailDomains: ['acme.example'], organizationRoleIds: [roleId('member')], ssoConnectorIds: [world.sso.id] },
    });
    expect(file.hooks[0]).to.not.have.property('signingKey');
    expect(file.connectors[0].config).to.not.have.property('clientSecret');
    expect(file.ssoConnectors[0].config).to.deep.equal({
      issuer: 'https://login.acme.example',
      clientId: 'acme-client',
      trustUnverifiedEmail: false,
    });
    expect(file.signInExperience.passwordPolicy.length.min).to.equal(12);
    // The three confidential applications' "Default secret"s, and the one added.
    expect(file.applicationSecrets).to.have.length(4);
    const pipeline = file.applicationSecrets.find((secret: { name: string }) => secret.name === 'ci pipeline');
    expect(pipeline).to.include({ applicationId: world.machine.id });
    for (const secret of file.applicationSecrets) {
      expect(secret).to.not.have.property('value');
    }
    expect(file.trustedIssuers).to.have.length(1);
    expect(file.trustedIssuers[0]).to.deep.include({
      id: world.trustedIssuer.id,
      algorithms: ['ES256'],
      userMapping: { claim: 'sub', by: 'identity', connectorId: world.social.id },
    });
    expect(file.customPhrases).to.deep.equal([
      { id: file.customPhrases[0].id, languageTag: 'de', translation: { signIn: { submit: 'Los' } } },
    ]);
    expect(file.emailTemplates[0]).to.deep.include({
      languageTag: 'en',
      templateType: 'SignIn',
      details: { subject: 'Your code {{code}}', content: '<p>{{code}}</p>', replyTo: 'help@example.com' },
    });
    for (const absent of [
      world.machine.secret,
      world.hook.signingKey,
      world.namedSecret.value,
      'acme-sso-secret',
      'social-secret',
      'not_exported',
      'management-api-all"',
      '"console"',
      'test-admin"',
    ]) {
      expect(first.stdout).to.not.include(absent);
    }

    const again = await cli(sourceEnv, 'export', '--out', fileIn('again.json'));
    expect(again.code, again.stderr).to.equal(0);
    expect(readFileSync(fileIn('again.json'), 'utf8')).to.equal(first.stdout);
  });

  for (const withSecrets of [false, true]) {
    it(`export${withSecrets ? ' --with-secrets' : ''} → import into an empty database → export gives the same file`, async () => {
      const flags = withSecrets ? ['--with-secrets'] : [];
      const exported = await cli(sourceEnv, 'export', '--out', fileIn('a.json'), ...flags);
      expect(exported.code, exported.stderr).to.equal(0);

      // Another database, encrypted with another key: secrets travel in the clear inside the file only.
      const targetEnv = { DB_URL: await freshDatabaseUrl(), SECRETS_ENCRYPTION_KEY: newKey() };
      const imported = await cli(targetEnv, 'import', fileIn('a.json'));
      expect(imported.code, imported.stderr).to.equal(0);
      expect(imported.stdout).to.match(/^Imported .*a\.json: \d+ created, 0 updated\./);
      if (!withSecrets) {
        expect(imported.stdout).to.include(`application ${world.machine.id} (Order sync): created with a new secret`);
        expect(imported.stdout).to.include(`connector ${world.social.id} (social-idp): no client secret`);
        expect(imported.stdout).to.include(
          `application ${world.machine.id}: secret ci pipeline created with a new value`,
        );
      }
      const reexported = await cli(targetEnv, 'export', '--out', fileIn('b.json'), ...flags);
      expect(reexported.code, reexported.stderr).to.equal(0);
      expect(readFileSync(fileIn('b.json'), 'utf8')).to.equal(readFileSync(fileIn('a.json'), 'utf8'));

      // Again: nothing new, everything updated to what it is, the same export.
      const twice = await cli(targetEnv, 'import', fileIn('a.json'));
      expect(twice.stdout).to.match(/: 0 created, [1-9]\d* updated\./);
      expect((await cli(targetEnv, 'export', ...flags)).stdout).to.equal(readFileSync(fileIn('a.json'), 'utf8'));

      if (withSecrets) {
        // What the secrets protect works in the new database: the machine gets a token with its old secret.
        const target = await startService({
          dbUrl: targetEnv.DB_URL,
          env: { SECRETS_ENCRYPTION_KEY: targetEnv.SECRETS_ENCRYPTION_KEY },
        });
        try {
          const token = await target.token(world.machine.id, world.machine.secret, {
            grant_type: 'client_credentials',
            resource: world.orders.resource.indicator,
            scope: 'write:orders',
          });
          expect(token.statusCode, JSON.stringify(token.body)).to.equal(200);
          const byNamedSecret = await target.token(world.machine.id, world.namedSecret.value, {
            grant_type: 'client_credentials',
            resource: world.orders.resource.indicator,
            scope: 'write:orders',
          });
          expect(byNamedSecret.statusCode, JSON.stringify(byNamedSecret.body)).to.equal(200);
          expect(ok(await target.api.get(`trusted-issuers/${world.trustedIssuer.id}`))).to.deep.equal({
            ...world.trustedIssuer,
            // A set: the file holds it sorted.
            applicationIds: [...world.trustedIssuer.applicationIds].sort(),
          });
          expect(ok(await target.api.get(`hooks/${world.hook.id}`)).signingKey).to.equal(world.hook.signingKey);
          expect(ok(await target.api.get(`connectors/${world.social.id}`)).config.clientSecret).to.equal(
            '••••••••6789',
          );
        } finally {
          await target.stop();
        }
      }
    });
  }

  it('refuses a file with problems, naming each, and changes nothing', async () => {
    const targetEnv = { DB_URL: await freshDatabaseUrl() };
    expect((await cli(targetEnv, 'export', '--out', fileIn('empty.json'))).code).to.equal(0);
    const file = JSON.parse((await cli(sourceEnv, 'export')).stdout);
    file.roles[0].scopeIds.push('no-such-scope');
    file.applications[0].oidcClientMetadata.redirectUris.push('not a uri');
    file.resources.push({ ...file.resources[0], id: 'management-api', scopes: [] });
    writeFileSync(fileIn('bad.json'), JSON.stringify(file));
    const refused = await cli(targetEnv, 'import', fileIn('bad.json'));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('is not a configuration this service can import; nothing was changed');
    expect(refused.stderr).to.include(
      'applications[0].oidcClientMetadata.redirectUris[1]: must be an absolute URI without a fragment',
    );
    expect(refused.stderr).to.not.match(/\n\s+at /);

    // The shape is right, a reference is not: checked against the database, in the transaction.
    file.applications[0].oidcClientMetadata.redirectUris.pop();
    file.resources.pop();
    writeFileSync(fileIn('bad.json'), JSON.stringify(file));
    const dangling = await cli(targetEnv, 'import', fileIn('bad.json'));
    expect(dangling.code).to.equal(1);
    expect(dangling.stderr).to.include('roles[0].scopeIds: no scope no-such-scope in the file or the database');

    const builtIn = JSON.parse(readFileSync(fileIn('empty.json'), 'utf8'));
    builtIn.resources.push({ ...file.resources[0], id: 'management-api', scopes: [] });
    writeFileSync(fileIn('bad.json'), JSON.stringify(builtIn));
    expect((await cli(targetEnv, 'import', fileIn('bad.json'))).stderr).to.include(
      'resources: management-api is built in',
    );

    writeFileSync(fileIn('bad.json'), '{"version": 1, "resources": [');
    expect((await cli(targetEnv, 'import', fileIn('bad.json'))).stderr).to.match(/not JSON/);

    expect((await cli(targetEnv, 'export')).stdout).to.equal(readFileSync(fileIn('empty.json'), 'utf8'));
  });

  it('imports a file from before named secrets, trusted issuers, custom phrases and email templates travelled', async () => {
    const file = JSON.parse((await cli(sourceEnv, 'export')).stdout);
    const newer = ['applicationSecrets', 'trustedIssuers', 'customPhrases', 'emailTemplates'];
    writeFileSync(
      fileIn('older.json'),
      JSON.stringify(Object.fromEntries(Object.entries(file).filter(([key]) => !newer.includes(key)))),
    );
    const targetEnv = { DB_URL: await freshDatabaseUrl() };
    const imported = await cli(targetEnv, 'import', fileIn('older.json'));
    expect(imported.code, imported.stderr).to.equal(0);
    expect(JSON.parse((await cli(targetEnv, 'export')).stdout)).to.deep.equal({
      ...file,
      ...Object.fromEntries(newer.map((key) => [key, []])),
    });
  });

  it('imports sign-in experience settings from before the newer fields existed: the defaults fill them', async () => {
    const file = JSON.parse((await cli(sourceEnv, 'export')).stdout);
    const newer = ['usernamePolicy', 'passwordExpiration', 'adaptiveMfa', 'emailBlocklistPolicy'];
    const older = {
      ...file,
      signInExperience: Object.fromEntries(
        Object.entries(file.signInExperience).filter(([key]) => !newer.includes(key)),
      ),
    };
    writeFileSync(fileIn('older-settings.json'), JSON.stringify(older));
    const targetEnv = { DB_URL: await freshDatabaseUrl() };
    const imported = await cli(targetEnv, 'import', fileIn('older-settings.json'));
    expect(imported.code, imported.stderr).to.equal(0);
    const settings = JSON.parse((await cli(targetEnv, 'export')).stdout).signInExperience;
    expect(settings.usernamePolicy).to.include({ caseSensitive: true, minLength: 1, maxLength: 128 });
    expect(settings.passwordExpiration).to.deep.equal({});
  });

  it('refuses named secrets, trusted issuers and custom phrases the API would refuse', async () => {
    const targetEnv = { DB_URL: await freshDatabaseUrl() };
    const file = JSON.parse((await cli(sourceEnv, 'export')).stdout);
    const shop = file.applications.find((application: { name: string }) => application.name === 'Shop');
    const spaSecret = file.applicationSecrets.length;
    file.applicationSecrets.push({ ...file.applicationSecrets[0], id: 'spa-secret', applicationId: shop.id });
    file.trustedIssuers[0].applicationIds.push('no-such-app');
    file.trustedIssuers[0].userMapping.connectorId = 'no-such-connector';
    writeFileSync(fileIn('bad-references.json'), JSON.stringify(file));
    const dangling = await cli(targetEnv, 'import', fileIn('bad-references.json'));
    expect(dangling.code).to.equal(1);
    expect(dangling.stderr).to.include(
      `applicationSecrets[${spaSecret}]: only MachineToMachine and Traditional applications have secrets`,
    );
    expect(dangling.stderr).to.include(
      'trustedIssuers[0].applicationIds: no application no-such-app in the file or the database',
    );
    expect(dangling.stderr).to.include(
      'trustedIssuers[0].userMapping.connectorId: no connector no-such-connector in the file or the database',
    );

    const phrases = JSON.parse((await cli(sourceEnv, 'export')).stdout);
    phrases.customPhrases[0].translation.signIn.noSuchText = 'Nein';
    phrases.emailTemplates[0].details.subject = '{{#code}}';
    writeFileSync(fileIn('bad-texts.json'), JSON.stringify(phrases));
    const texts = await cli(targetEnv, 'import', fileIn('bad-texts.json'));
    expect(texts.code).to.equal(1);
    expect(texts.stderr).to.include('emailTemplates[0].details.subject:');
    expect((await cli(targetEnv, 'export')).stdout).to.not.include('noSuchText');

    delete phrases.emailTemplates;
    writeFileSync(fileIn('bad-texts.json'), JSON.stringify(phrases));
    expect((await cli(targetEnv, 'import', fileIn('bad-texts.json'))).stderr).to.include(
      'customPhrases[0] (de).signIn.noSuchText: is not a phrase of the catalogue',
    );
  });

  it('refuses, as the API does, the rules a route applies: every problem named, nothing changed', async () => {
    const targetEnv = { DB_URL: await freshDatabaseUrl(), HOOKS_ALLOW_PRIVATE_TARGETS: 'false' };
    const before = (await cli(targetEnv, 'export')).stdout;
    const file = JSON.parse((await cli(sourceEnv, 'export')).stdout);
    const at = Number(file.applications.length);
    const application = (name: string, type: string, extra: Record<string, unknown>) => ({
      ...file.applications.find((entry: { type: string }) => entry.type === 'Traditional'),
      id: `app-${name}`,
      name,
      type,
      roleIds: [],
      ...extra,
    });
    file.applications.push(
      application('spa', 'SPA', { customClientMetadata: { allowTokenExchange: true } }),
      application('outsider', 'Traditional', {
        isThirdParty: true,
        customClientMetadata: { allowTokenExchange: true },
      }),
      application('tv', 'Traditional', { customClientMetadata: { isDeviceFlow: true } }),
    );
    // With just-in-time membership by email domain, this role would hand a stranger the console's `all`.
    const ot = file.organizationRoles.length;
    file.organizationRoles.push({
      id: 'org-boss',
      name: 'Boss',
      description: null,
      type: 'User',
      createdAt: 0,
      organizationScopeIds: [],
      resourceScopeIds: [managementApi.scopeId],
    });
    file.organizations[0].jit.organizationRoleIds.push('org-boss');
    const rt = file.roles.length;
    file.roles.push({
      ...file.roles[0],
      id: 'role-boss',
      name: 'Boss',
      type: 'User',
      scopeIds: [managementApi.scopeId],
    });
    file.signInExperience.signUp = {
      identifiers: [],
      password: false,
      verify: false,
      secondaryIdentifiers: [{ identifier: 'email', verify: true }],
    };
    file.hooks[0].config.url = 'http://127.0.0.1:9/hook';
    writeFileSync(fileIn('route-rules.json'), JSON.stringify(file));

    const refused = await cli(targetEnv, 'import', fileIn('route-rules.json'));
    expect(refused.code, refused.stdout).to.equal(1);
    for (const problem of [
      `applications[${at}]: Token exchange can only be enabled for confidential applications`,
      `applications[${at + 1}]: Third-party applications cannot enable token exchange.`,
      `applications[${at + 2}]: Device flow is only available for native applications.`,
      `organizationRoles[${ot}]: Cannot assign management API scopes to a user role.`,
      `roles[${rt}]: Cannot assign management API scopes to a user role.`,
      'signInExperience: Secondary sign-up identifiers need a primary one.',
      'hooks[0].config.url: The hook target',
    ]) {
      expect(refused.stderr).to.include(problem);
    }
    expect(refused.stderr).to.not.match(/\n\s+at /);
    expect((await cli(targetEnv, 'export')).stdout).to.equal(before);
  });

  it('refuses an entry that collides with another row of the database, and rolls back what it wrote before', async () => {
    const target = await startService();
    const targetEnv = { DB_URL: target.config.dbUrl };
    try {
      ok(
        await target.api.post('roles', {
          json: { name: 'Order worker', description: 'already here, under another id', type: 'MachineToMachine' },
        }),
      );
      const before = (await cli(targetEnv, 'export')).stdout;
      writeFileSync(fileIn('colliding.json'), (await cli(sourceEnv, 'export')).stdout);
      const imported = await cli(targetEnv, 'import', fileIn('colliding.json'));
      expect(imported.code).to.equal(1);
      expect(imported.stderr.trim()).to.match(
        /^roles \w+: another row in the database has the same name; nothing was changed$/,
      );
      // The resources the file puts before its roles were rolled back.
      expect((await cli(targetEnv, 'export')).stdout).to.equal(before);
    } finally {
      await target.stop();
    }
  });

  it('reads and writes every column of the tables it covers (a new column must say how it travels)', async () => {
    const db = openDatabase(await freshDatabaseUrl());
    try {
      await migrateToLatest(db);
      for (const [table, columns] of Object.entries(configColumns)) {
        expect(Object.keys(await db(table).columnInfo()).sort(), table).to.deep.equal([...columns].sort());
      }
    } finally {
      await db.destroy();
    }
  });
});
