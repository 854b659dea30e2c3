import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

type CustomPhrase = { tenantId: string; id: string; languageTag: string; translation: Record<string, unknown> };

/** Logto's custom phrases (`/api/custom-phrases`), and the hosted page they change. */
describe('custom phrases', () => {
  let service: TestService;
  let apiClient: ReturnType<typeof logtoManagementClient>;

  before(async () => {
    service = await startService();
    apiClient = logtoManagementClient(service);
  });
  after(async () => {
    await ifSet(service)?.stop();
  });
  afterEach(async () => {
    for (const { languageTag } of (await service.api.get<CustomPhrase[]>('custom-phrases')).body) {
      expectStatus(await service.api.delete(`custom-phrases/${languageTag}`), 204);
    }
  });

  /** The catalogue the sign-in page is sent with (its JSON data block), for a browser wanting `acceptLanguage`. */
  async function pageCatalogue(acceptLanguage: string) {
    const response = await fetch(`${service.url}/sign-in`, { headers: { 'accept-language': acceptLanguage } });
    const html = await response.text();
    const block = /<script type="application\/json" id="phrases">(.*?)<\/script>/s.exec(html)?.[1];
    expect(block, 'the page carries its phrases').to.be.a('string');
    return {
      lang: /<html lang="([^"]+)">/.exec(html)?.[1],
      ...(JSON.parse(block!) as { language: string; catalogue: { signIn: Record<string, string> } }),
    };
  }

  it("saves, lists, reads and deletes a language's phrases through Logto's client", async () => {
    const saved = await apiClient.PUT('/api/custom-phrases/{languageTag}', {
      params: { path: { languageTag: 'de' } },
      // Logto's generated type spells its index signature as a literal key (`"[translationKey]"`).
      body: { signIn: { submit: 'Einloggen', forgotPassword: 'Kennwort vergessen?' } } as never,
    });
    expect(saved.response.status, JSON.stringify(saved.error)).to.equal(201);
    expect(saved.data).to.include({ tenantId: 'default', languageTag: 'de' });
    expect(saved.data!.translation).to.deep.equal({
      signIn: { submit: 'Einloggen', forgotPassword: 'Kennwort vergessen?' },
    });

    // Replacing keeps the id; what the new body leaves out is no longer custom.
    const replaced = await service.api.put<CustomPhrase>('custom-phrases/de', { json: { signIn: { submit: 'Los' } } });
    expectStatus(replaced, 201);
    expect(replaced.body.id).to.equal(saved.data!.id);

    const listed = await apiClient.GET('/api/custom-phrases');
    expect(listed.data!.map(({ languageTag }) => languageTag)).to.deep.equal(['de']);
    const read = await apiClient.GET('/api/custom-phrases/{languageTag}', { params: { path: { languageTag: 'de' } } });
    expect(read.data!.translation).to.deep.equal({ signIn: { submit: 'Los' } });

    const page = await pageCatalogue('de-DE,de;q=0.9');
    expect(page.lang).to.equal('de');
    expect(page.catalogue.signIn.submit).to.equal('Los');
    expect(page.catalogue.signIn.forgotPassword).to.equal('Passwort vergessen?');

    expectStatus(await service.api.delete('custom-phrases/de'), 204);
    expectError(await service.api.get('custom-phrases/de'), 404, 'entity.not_exists_with_id');
    expect((await pageCatalogue('de')).catalogue.signIn.submit).to.equal('Anmelden');
  });

  it("weighs Accept-Language's q-values and falls back from a region to its language", async () => {
    expect((await pageCatalogue('en;q=0.1, fr-CH;q=0.9, it')).language).to.equal('fr');
    expect((await pageCatalogue('ja-JP')).lang).to.equal('ja');
    expect((await pageCatalogue('es-419, en')).language).to.equal('es');
    expect((await pageCatalogue('es-MX')).catalogue.signIn.submit).to.equal('Iniciar sesión');
    expect((await pageCatalogue('de;q=0, en')).language).to.equal('en');
    expect((await pageCatalogue('*')).language).to.equal('en');
    expect((await pageCatalogue('')).lang).to.equal('en');
  });

  it('serves Simplified Chinese to the tags written in it, and Traditional Chinese on to the next language', async () => {
    for (const tag of ['zh', 'zh-Hans', 'zh-CN', 'zh-cn', 'zh-SG', 'zh-Hans-HK']) {
      const page = await pageCatalogue(`${tag}, en;q=0.5`);
      expect(page, tag).to.include({ lang: 'zh-CN', language: 'zh-CN' });
      expect(page.catalogue.signIn.submit, tag).to.equal('登录');
    }
    for (const tag of ['zh-TW', 'zh-Hant', 'zh-HK', 'zh-Hant-CN']) {
      expect((await pageCatalogue(tag)).language, tag).to.equal('en');
      expect((await pageCatalogue(`${tag}, ja;q=0.5`)).language, tag).to.equal('ja');
    }
    // A tag that is no language tag, or longer than any, is passed over.
    expect((await pageCatalogue('zh-!!, es')).language).to.equal('es');
    expect((await pageCatalogue(`zh-${'Hans-'.repeat(20)}CN, ja`)).language).to.equal('ja');
  });

  it('adds a language the service does not ship, over English', async () => {
    expectStatus(await service.api.put('custom-phrases/it', { json: { signIn: { submit: 'Accedi' } } }), 201);
    const page = await pageCatalogue('it-IT, en;q=0.5');
    expect(page).to.include({ lang: 'it', language: 'it' });
    expect(page.catalogue.signIn.submit).to.equal('Accedi');
    expect(page.catalogue.signIn.password).to.equal('Password');
  });

  it("adds Traditional Chinese over English, and a region's phrases over its language's catalogue", async () => {
    expectStatus(await service.api.put('custom-phrases/zh-TW', { json: { signIn: { submit: '登入' } } }), 201);
    expectStatus(
      await service.api.put('custom-phrases/zh-SG', { json: { signIn: { password: '密码（新加坡）' } } }),
      201,
    );
    const traditional = await pageCatalogue('zh-TW');
    expect(traditional).to.include({ lang: 'zh-TW', language: 'zh-TW' });
    expect(traditional.catalogue.signIn).to.include({ submit: '登入', password: 'Password' });
    const singapore = await pageCatalogue('zh-SG');
    expect(singapore).to.include({ lang: 'zh-SG', language: 'zh-SG' });
    expect(singapore.catalogue.signIn).to.include({ submit: '登录', password: '密码（新加坡）' });
    // Hong Kong is written in Traditional characters too: the operator's zh-TW serves it.
    expect((await pageCatalogue('zh-HK')).language).to.equal('zh-TW');
  });

  it('refuses keys the catalogue lacks, bad shapes and bad language tags, and keeps the fallback language', async () => {
    const unknown = await service.api.put('custom-phrases/de', { json: { signIn: { submitt: 'x' }, nope: 'y' } });
    expectError(unknown, 422, 'localization.invalid_translation_structure');
    expect(JSON.stringify(unknown.body)).to.include('signIn.submitt').and.include('nope');
    expectError(
      await service.api.put('custom-phrases/de', { json: { signIn: { submit: 42 } } }),
      400,
      'guard.invalid_input',
    );
    expectError(
      await service.api.put('custom-phrases/de', { json: { signIn: 'x' } }),
      422,
      'localization.invalid_translation_structure',
    );
    expectError(await service.api.put('custom-phrases/not a tag', { json: {} }), 400, 'guard.invalid_input');
    expectError(await service.api.delete('custom-phrases/pt'), 404, 'entity.not_exists_with_id');

    expectStatus(await service.api.put('custom-phrases/it', { json: {} }), 201);
    expectStatus(
      await service.api.patch('sign-in-exp', { json: { languageInfo: { autoDetect: true, fallbackLanguage: 'it' } } }),
      200,
    );
    try {
      expectError(await service.api.delete('custom-phrases/it'), 409, 'localization.cannot_delete_default_language');
    } finally {
      await service.api.patch('sign-in-exp', { json: { languageInfo: { autoDetect: true, fallbackLanguage: 'en' } } });
    }
  });

  it('is for management tokens only', async () => {
    const response = await fetch(`${service.url}/api/custom-phrases`);
    expect(response.status).to.equal(401);
  });
});
