import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { type Organization } from './support.ts';

/** Logto's organization fields beyond name and custom data: branding, colours, custom CSS, required MFA. */
describe('organizations: branding, color, customCss and isMfaRequired', () => {
  let service: TestService;
  let apiClient: ReturnType<typeof logtoManagementClient>;

  before(async () => {
    service = await startService();
    apiClient = logtoManagementClient(service);
  });
  after(() => service.stop());

  const branding = {
    logoUrl: 'https://cdn.example.com/acme/logo.svg',
    darkLogoUrl: 'https://cdn.example.com/acme/logo-dark.svg',
    favicon: 'https://cdn.example.com/acme/favicon.ico',
    darkFavicon: 'https://cdn.example.com/acme/favicon-dark.ico',
  };
  const color = { primaryColor: '#5d34f2', isDarkModeEnabled: true, darkPrimaryColor: '#A0F' };
  const customCss = '.logto_main-content { border-radius: 12px; }';

  it('round-trips them through POST, GET, PATCH and the list with the @logto/api client', async () => {
    const created = await apiClient.POST('/api/organizations', {
      body: { name: 'Acme', branding, color, customCss, isMfaRequired: true },
    });
    expect(created.response.status, JSON.stringify(created.error)).to.equal(201);
    expect(created.data).to.deep.include({ branding, color, customCss, isMfaRequired: true });
    const id = created.data!.id;

    const read = await apiClient.GET('/api/organizations/{id}', { params: { path: { id } } });
    expect(read.data).to.deep.include({ branding, color, customCss, isMfaRequired: true });
    const listed = await apiClient.GET('/api/organizations', { params: { query: { q: id } } });
    expect(
      listed.data?.map(({ branding: listedBranding, color: listedColor }) => ({ listedBranding, listedColor })),
    ).to.deep.equal([{ listedBranding: branding, listedColor: color }]);

    // PATCH replaces a JSON field as a whole (Logto's `replace` mode) and leaves the others as they are.
    const patched = await apiClient.PATCH('/api/organizations/{id}', {
      params: { path: { id } },
      body: { branding: { logoUrl: 'https://cdn.example.com/acme/new.png' }, isMfaRequired: false },
    });
    expect(patched.response.status, JSON.stringify(patched.error)).to.equal(200);
    expect(patched.data).to.deep.include({
      branding: { logoUrl: 'https://cdn.example.com/acme/new.png' },
      color,
      customCss,
      isMfaRequired: false,
    });
    const reread = await apiClient.GET('/api/organizations/{id}', { params: { path: { id } } });
    expect(reread.data).to.deep.equal(patched.data);
  });

  it('defaults to empty branding and color, no custom CSS and MFA not required', async () => {
    const created = await apiClient.POST('/api/organizations', { body: { name: 'Plain' } });
    expect(created.data).to.deep.include({ branding: {}, color: {}, customCss: null, isMfaRequired: false });
  });

  it('clears them: null custom CSS, and {} (or null) branding and color', async () => {
    const created = await service.api.post<Organization>('organizations', {
      json: { name: 'Clear me', branding, color, customCss },
    });
    expectStatus(created, 201);
    const { id } = created.body;

    const cleared = await service.api.patch<Organization>(`organizations/${id}`, {
      json: { branding: {}, color: null, customCss: null },
    });
    expectStatus(cleared, 200);
    expect(cleared.body).to.deep.include({ branding: {}, color: {}, customCss: null });
    expect((await service.api.get<Organization>(`organizations/${id}`)).body).to.deep.include({
      branding: {},
      color: {},
      customCss: null,
    });
    const nulled = await service.api.patch<Organization>(`organizations/${id}`, { json: { branding: null } });
    expect(nulled.body.branding).to.deep.equal({});
  });

  it('refuses URLs that are not http(s), colours that are not hex, unknown keys and oversized CSS with 400', async () => {
    const created = await service.api.post<Organization>('organizations', { json: { name: 'Strict' } });
    const { id } = created.body;
    for (const json of [
      { branding: { logoUrl: 'not a url' } },
      { branding: { logoUrl: 'javascript:alert(1)' } },
      { branding: { darkLogoUrl: `https://example.com/${'a'.repeat(2048)}` } },
      { branding: { logo: 'https://example.com/logo.png' } },
      { color: { primaryColor: 'red' } },
      { color: { primaryColor: '#12345' } },
      { color: { darkPrimaryColor: '#gggggg' } },
      { color: { isDarkModeEnabled: 'yes' } },
      { color: { accentColor: '#fff' } },
      { customCss: 42 },
      { customCss: 'a'.repeat(65_537) },
      { isMfaRequired: null },
    ]) {
      expectError(await service.api.patch(`organizations/${id}`, { json }), 400, 'guard.invalid_input');
      expectError(
        await service.api.post('organizations', { json: { name: 'Refused', ...json } }),
        400,
        'guard.invalid_input',
      );
    }
    expect((await service.api.get<Organization>(`organizations/${id}`)).body).to.deep.include({
      branding: {},
      color: {},
      customCss: null,
    });
  });

  it('stores the largest accepted values', async () => {
    const long = (name: string) => `https://cdn.example.com/${name}/${'é'.repeat(2000)}`;
    const largest = {
      branding: { logoUrl: long('a'), darkLogoUrl: long('b'), favicon: long('c'), darkFavicon: long('d') },
      customCss: '€'.repeat(65_536),
    };
    const created = await service.api.post<Organization>('organizations', { json: { name: 'Large', ...largest } });
    expectStatus(created, 201);
    const read = await service.api.get<Organization>(`organizations/${created.body.id}`);
    expect(read.body.customCss).to.equal(largest.customCss);
    expect(read.body.branding).to.deep.equal(created.body.branding);
    expect(Object.keys(read.body.branding)).to.have.length(4);
  });
});
