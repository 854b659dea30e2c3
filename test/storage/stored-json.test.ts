import { expect } from 'chai';
import type { Knex } from 'knex';

import { bumpCacheVersion } from '../../lib/storage/shared-cache.ts';
import { freshDatabaseUrl, openDatabase } from '../support/database.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

/**
 * JSON columns are read through the schemas of what writes them, once, where rows become entities.
 * What older versions (or the configuration import) wrote, which today's request schemas refuse,
 * still reads as it was written.
 */
describe('stored JSON: what older versions wrote still reads', () => {
  let service: TestService;
  let db: Knex;

  before(async () => {
    const dbUrl = await freshDatabaseUrl();
    service = await startService({ dbUrl });
    db = openDatabase(dbUrl);
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(service)?.stop();
  });

  const created = (response: HttpResponse): string => {
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return (response.body as { id: string }).id;
  };

  const read = async (path: string) => {
    const response = await service.api.get(path);
    expect(response.statusCode, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
    return response.body as Record<string, unknown>;
  };

  it("an application's custom data larger than requests may now send", async () => {
    const id = created(await service.api.post('applications', { json: { name: 'Older', type: 'SPA' } }));
    const customData = { notes: 'x'.repeat(300 * 1024) };
    await db('applications')
      .where({ id })
      .update({ custom_data: JSON.stringify(customData) });
    await bumpCacheVersion(db, 'applications');
    expect((await read(`applications/${id}`)).customData).to.deep.equal(customData);
  });

  it('a social connector named in more locales, and longer ones, than requests may now send', async () => {
    const id = created(
      await service.api.post('connectors', {
        json: {
          connectorId: 'oidc',
          // Saved only if its IdP answers: the service itself.
          config: { issuer: service.config.issuer, clientId: 'client', clientSecret: 'secret' },
          metadata: { target: 'older-names' },
        },
      }),
    );
    const name = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`${'l'.repeat(65)}-${index}`, 'Name']));
    await db('social_connectors')
      .where({ id })
      .update({ metadata: JSON.stringify({ target: 'older-names', name }) });
    await bumpCacheVersion(db, 'connectors');
    expect((await read(`connectors/${id}`)).name).to.deep.equal(name);
  });

  it("an SSO connector's plain-http issuer on another host, and branding as an import wrote it", async () => {
    const id = created(
      await service.api.post('sso-connectors', { json: { providerName: 'OIDC', connectorName: 'Older SSO' } }),
    );
    const branding = { displayName: 'Older', note: 'kept' };
    await db('sso_connectors')
      .where({ id })
      .update({
        config: JSON.stringify({ issuer: 'http://idp.example.com', clientId: 'client', clientSecret: 'secret' }),
        branding: JSON.stringify(branding),
      });
    await bumpCacheVersion(db, 'connectors');
    const connector = await read(`sso-connectors/${id}`);
    expect(connector.config).to.include({ issuer: 'http://idp.example.com', clientId: 'client' });
    expect(connector.branding).to.deep.equal(branding);
  });

  it("an audit log entry in the first version's shape", async () => {
    const payload = {
      key: 'ExchangeTokenBy.TokenExchange',
      result: 'Error',
      error: 'invalid_grant',
      applicationId: 'older-app',
      params: { resource: 'https://api.example.com' },
    };
    await db('logs').insert({
      id: 'older-log-entry',
      key: payload.key,
      payload: JSON.stringify(payload),
      user_id: null,
      application_id: payload.applicationId,
      created_at: Date.now(),
    });
    expect((await read('logs/older-log-entry')).payload).to.deep.equal(payload);
  });
});
