import { expect } from 'chai';

import { logtoManagementClient, startService, type TestService } from '../support/service.ts';

/** The official Logto management client (`@logto/api`) against this service. */
describe('management API: the @logto/api client', () => {
  let service: TestService;
  let apiClient: ReturnType<typeof logtoManagementClient>;

  before(async () => {
    service = await startService();
    apiClient = logtoManagementClient(service);
  });
  after(() => service.stop());

  it('creates a resource and sees it listed', async () => {
    const indicator = 'https://orders.example.com/api';

    const created = await apiClient.POST('/api/resources', { body: { name: 'Orders', indicator } });

    expect(created.response.status, JSON.stringify(created.error)).to.equal(201);
    expect(created.data).to.include({ name: 'Orders', indicator, isDefault: false, accessTokenTtl: 3600 });
    expect(created.data?.id).to.be.a('string').and.not.equal('');

    const listed = await apiClient.GET('/api/resources');

    expect(listed.response.status).to.equal(200);
    expect(
      listed.data?.map(({ id, indicator: listedIndicator }) => ({ id, indicator: listedIndicator })),
    ).to.deep.include({
      id: created.data?.id,
      indicator,
    });
  });

  it('creates a scope of a resource and sees it listed', async () => {
    const resource = await apiClient.POST('/api/resources', {
      body: { name: 'Invoices', indicator: 'https://invoices.example.com/api' },
    });
    expect(resource.response.status, JSON.stringify(resource.error)).to.equal(201);
    const resourceId = resource.data!.id;

    const scope = await apiClient.POST('/api/resources/{resourceId}/scopes', {
      params: { path: { resourceId } },
      body: { name: 'read:invoices', description: 'Read invoices' },
    });

    expect(scope.response.status, JSON.stringify(scope.error)).to.equal(201);
    expect(scope.data).to.include({ resourceId, name: 'read:invoices', description: 'Read invoices' });

    const scopes = await apiClient.GET('/api/resources/{resourceId}/scopes', { params: { path: { resourceId } } });

    expect(scopes.response.status).to.equal(200);
    expect(scopes.data).to.deep.equal([scope.data]);
  });
});
