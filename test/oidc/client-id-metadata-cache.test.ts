import { expect } from 'chai';

import { createLogger } from '../../lib/http/logger.ts';
import { ClientIdMetadataDocuments } from '../../lib/oidc/client-id-metadata/documents.ts';
import { type DocumentServer, startDocumentServer } from '../support/document-server.ts';
import { unique } from '../support/values.ts';

const minute = 60_000;

/** How long a client's metadata document is kept: its Cache-Control max-age within 5 min–24 h; a failure 1 min. */
describe('Client ID Metadata Documents: the cache', () => {
  let documents: DocumentServer;
  let now = Date.now();
  let registry: ClientIdMetadataDocuments;
  before(async () => (documents = await startDocumentServer()));
  after(() => documents.close());
  beforeEach(() => {
    registry = new ClientIdMetadataDocuments(
      { enabled: true, hosts: ['localhost', '127.0.0.1'], allowPrivateTargets: true, now: () => now },
      createLogger({ production: true, logLevel: 'silent' }),
    );
  });

  /** A document served with `headers`; returns its URL and its path on the server. */
  function published(status: number, headers: Record<string, string> = {}) {
    const path = `/${unique('agent')}/client.json`;
    const clientId = documents.url(path);
    documents.serve(path, { status, headers, body: { client_id: clientId, redirect_uris: ['https://agent.test/cb'] } });
    return { clientId, path };
  }

  /** Looks the client up at `atMinutes` from now; returns the fetches made so far. */
  async function lookUp(clientId: string, path: string, atMinutes: number) {
    now += atMinutes * minute;
    await registry.client(clientId).catch(() => undefined);
    return documents.fetches(path);
  }

  it('keeps a document for its max-age', async () => {
    const { clientId, path } = published(200, { 'cache-control': 'public, max-age=1200' });
    expect(await lookUp(clientId, path, 0)).to.equal(1);
    expect(await lookUp(clientId, path, 19)).to.equal(1);
    expect(await lookUp(clientId, path, 2)).to.equal(2);
    expect(await registry.client(clientId)).to.include({ client_id: clientId, token_endpoint_auth_method: 'none' });
  });

  it('keeps a document at least 5 minutes (max-age=10, none, no-store, no-cache) and at most 24 hours', async () => {
    for (const cacheControl of ['max-age=10', undefined, 'no-store, max-age=3600', 'no-cache']) {
      const { clientId, path } = published(200, cacheControl ? { 'cache-control': cacheControl } : {});
      expect(await lookUp(clientId, path, 0)).to.equal(1);
      expect(await lookUp(clientId, path, 4.9)).to.equal(1);
      expect(await lookUp(clientId, path, 0.2)).to.equal(2);
    }
    const { clientId, path } = published(200, { 'cache-control': 'max-age=31536000' });
    expect(await lookUp(clientId, path, 0)).to.equal(1);
    expect(await lookUp(clientId, path, 23 * 60)).to.equal(1);
    expect(await lookUp(clientId, path, 61)).to.equal(2);
  });

  it('asks again for a document that failed after a minute, not before', async () => {
    const { clientId, path } = published(500);
    expect(await lookUp(clientId, path, 0)).to.equal(1);
    expect(await lookUp(clientId, path, 0.9)).to.equal(1);
    expect(await lookUp(clientId, path, 0.2)).to.equal(2);
    const refused = await registry.client(clientId).catch((error: unknown) => error);
    expect(refused).to.include({ error: 'invalid_client' });
  });

  it('fetches at most 30 documents a minute from one host, and one host cannot push out the clients of others', async function () {
    // 1,085 look-ups, each a fetch from the document server: longer than 30 s on a loaded 2-core host.
    this.timeout(90_000);
    const refusal = (clientId: string) =>
      registry.client(clientId).then(
        () => 'ok',
        (error: unknown) => (error as { error_description: string }).error_description,
      );
    const kept = published(200, { 'cache-control': 'max-age=86400' });
    expect(await refusal(kept.clientId)).to.equal('ok');
    // 1,050 valid documents on 127.0.0.1 (more than memory holds), over 35 minutes: 30 a minute are fetched.
    let fetchedFromOther = 0;
    for (let minuteIndex = 0; minuteIndex < 35; minuteIndex += 1) {
      now += minute;
      for (let index = 0; index < 30; index += 1) {
        const path = `/${unique('flood')}/client.json`;
        const clientId = documents.url(path, '127.0.0.1');
        documents.serve(path, { body: { client_id: clientId, redirect_uris: ['https://agent.test/cb'] } });
        fetchedFromOther += (await refusal(clientId)) === 'ok' ? 1 : 0;
      }
      const over = documents.url(`/${unique('over')}/client.json`, '127.0.0.1');
      expect(await refusal(over)).to.match(/too many client metadata documents were fetched from 127\.0\.0\.1/);
    }
    expect(fetchedFromOther).to.equal(1050);
    // Still in memory: no second fetch.
    expect(await lookUp(kept.clientId, kept.path, 0)).to.equal(1);
  });
});
