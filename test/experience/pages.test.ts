import { expect } from 'chai';

import { buildIfStale } from '../support/build.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

/**
 * How the hosted sign-in pages are served (what the browser runs of them is in test/e2e): one built
 * page at every sign-in path under the strict page headers, nothing inline, and hashed assets cached
 * for good.
 */
describe('hosted sign-in pages: what is served', () => {
  let service: TestService;

  before(async () => {
    buildIfStale();
    service = await startService();
  });

  after(async () => {
    await ifSet(service)?.stop();
  });

  const text = (path: string) => service.http.get(path, { responseType: 'text', followRedirect: false });

  it('serves the page at each sign-in path with the strict headers, and its assets by hashed name', async () => {
    const paths = [
      'sign-in',
      'register',
      'reset-password',
      'consent',
      'callback',
      'callback/my-connector',
      'callback/sso/my-connector',
    ];
    const pages = await Promise.all(paths.map(text));
    for (const [index, page] of pages.entries()) {
      expect(page.statusCode, paths[index]).to.equal(200);
      expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(page.headers).to.include({
        'content-security-policy':
          "default-src 'self'; img-src 'self' data:; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'",
        'x-frame-options': 'DENY',
        'cache-control': 'no-store',
      });
      expect(page.body).to.equal(pages[0].body);
    }

    const html = pages[0].body as string;
    // Nothing inline: every script is a file (the CSP would refuse an inline one), no style attribute or
    // element; the one script element without a file is the page's phrases, JSON data the browser does not run.
    expect(html).to.not.match(/<script(?![^>]*\ssrc=)(?![^>]*type="application\/json")[^>]*>/);
    expect(html).to.match(/<script type="application\/json" id="phrases">\{"language":"en","catalogue":\{/);
    expect(html).to.not.match(/<style|\sstyle=/);
    const script = /<script type="module" crossorigin src="(\/experience-assets\/[\w.-]+\.js)">/.exec(html)?.[1];
    const stylesheet = /<link rel="stylesheet" crossorigin href="(\/experience-assets\/[\w.-]+\.css)">/.exec(html)?.[1];
    expect(script, html).to.be.a('string');
    expect(stylesheet, html).to.be.a('string');
    for (const [path, type] of [
      [script!, 'text/javascript; charset=utf-8'],
      [stylesheet!, 'text/css; charset=utf-8'],
    ] as const) {
      const asset = await text(path.slice(1));
      expect(asset.statusCode, path).to.equal(200);
      expect(asset.headers).to.include({
        'content-type': type,
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      });
      expect(asset.body).to.not.have.lengthOf(0);
    }
  });

  it('answers 404 for an asset it does not have, and leaves other paths alone', async () => {
    const missing = await text('experience-assets/experience.js');
    expect(missing.statusCode).to.equal(404);
    expect(missing.headers['cache-control']).to.equal(undefined);
    for (const path of ['callback/a/b', 'sign-in/x', 'callback/sso/']) {
      const other = await text(path);
      expect(other.statusCode, path).to.equal(404);
      expect(String(other.body)).to.not.include('<div id="app">');
    }
  });
});
