import { expect } from 'chai';

import { buildIfStale } from '../support/build.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

/** The paths of the files a page's HTML names (its script, stylesheet). */
const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((match) => match[1]);

describe('the request log', () => {
  before(function () {
    this.timeout(300_000);
    buildIfStale();
  });

  describe('in development', () => {
    let service: TestService;
    before(async () => {
      service = await startService({ logs: 'development' });
    });
    after(async () => {
      await ifSet(service)?.stop();
    });

    it('is one line per request: method, path, status and time, without the static files a page loads', async () => {
      const page = await service.http.get('sign-in', { responseType: 'text' });
      const assets = [...assetsOf(page.body), '/favicon.ico', '/sign-in-branding.css'];
      expect(assets.length).to.be.greaterThan(2);
      for (const asset of assets) {
        expect((await service.http.got.get(asset.slice(1), { responseType: 'buffer' })).statusCode, asset).to.equal(
          200,
        );
      }
      expect((await service.http.get('api/status')).statusCode).to.equal(204);
      expect((await service.http.get('no-such-page')).statusCode).to.equal(404);
      service.service.logger.flush();
      await new Promise((resolve) => setTimeout(resolve, 100));

      const lines = service.logs().split('\n');
      const requests = lines.filter((line) => /\b(GET|POST) \//.test(line));
      expect(requests).to.have.length(3);
      expect(requests[0]).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/sign-in 200 \d+(\.\d)? ms$/);
      expect(requests[1]).to.match(/INFO: GET \/api\/status 204 \d+(\.\d)? ms$/);
      expect(requests[2]).to.match(/INFO: GET \/no-such-page 404 \d+(\.\d)? ms$/);
      // Nothing else of theirs: no field printed on a line of its own.
      expect(lines.filter((line) => /^\s+(requestId|method|path|status|ms):/.test(line))).to.deep.equal([]);
    });
  });

  describe('as JSON (production)', () => {
    let service: TestService;
    before(async () => {
      service = await startService({ logs: true });
    });
    after(async () => {
      await ifSet(service)?.stop();
    });

    it('keeps the fields, with static files at debug and pages at info', async () => {
      const page = await service.http.get('sign-in', { responseType: 'text' });
      const [asset] = assetsOf(page.body);
      await service.http.got.get(asset.slice(1), { responseType: 'buffer' });
      await service.http.got.get('favicon.ico', { responseType: 'buffer' });
      const lines = service
        .logs()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.msg === 'request');
      const levelOf = (path: string) => lines.find((line) => line.path === path)?.level;
      expect(levelOf('/sign-in')).to.equal(30);
      expect(levelOf(asset)).to.equal(20);
      expect(levelOf('/favicon.ico')).to.equal(20);
      expect(lines.find((line) => line.path === '/sign-in')).to.include.keys('requestId', 'method', 'status', 'ms');
    });
  });
});
