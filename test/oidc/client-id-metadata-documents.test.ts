import { expect } from 'chai';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';

import { Browser } from '../experience/browser.ts';
import { type Answer, type DocumentServer, startDocumentServer } from '../support/document-server.ts';
import { createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn, submitPasswordSignIn } from '../support/sign-in.ts';
import { unique } from '../support/values.ts';
import { accessTokenType, delegationSetup, exchange, expectIssued, waitForLog } from '../token-exchange/support.ts';

const redirectUri = 'http://agent.test/callback';
const person = { username: 'ada', password: 'Correct-Horse-9' };

/** A document a client publishes at `clientId` (the URL it is fetched from), with `extra` members. */
const documentAt = (clientId: string, extra: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: 'Assistant',
  logo_uri: 'https://agent.example/logo.png',
  redirect_uris: [redirectUri],
  ...extra,
});

/** An authorization request's query for a client (code + PKCE). */
const authorizeQuery = (clientId: string, extra: Record<string, string> = {}) =>
  new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    ...extra,
  });
/** An authorization request as a JSON-asking caller sees its answer (the error page's JSON). */
async function authorize(service: TestService, clientId: string, extra: Record<string, string> = {}) {
  return service.http.get(`oidc/auth?${authorizeQuery(clientId, extra)}`, {
    headers: { accept: 'application/json' },
    followRedirect: false,
  });
}

/** draft-ietf-oauth-client-id-metadata-document: a client named by the https URL of its metadata. */
describe('OIDC: Client ID Metadata Documents', () => {
  let service: TestService;
  let documents: DocumentServer;
  /** A fresh path on the document server, serving `answer` (a client's document by default). */
  const published = (answer?: (clientId: string) => Answer, host?: string, folder = unique('agent')) => {
    const path = `/${folder}/client.json`;
    const clientId = documents.url(path, host);
    documents.serve(path, answer ? answer(clientId) : { body: documentAt(clientId) });
    return { clientId, path };
  };

  before(async () => {
    documents = await startDocumentServer();
    service = await startService({
      env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'localhost,*.agents.test' },
    });
    await service.api.post('users', { json: person });
  });
  after(async () => {
    await service.stop();
    await documents.close();
  });

  it('signs a person in for a URL client (code + PKCE, consent showing its host), tokens naming the URL, refresh', async () => {
    // A long URL (up to 255 characters) too: it is the client id in the audit log and the token denylist.
    const { clientId, path } = published(undefined, undefined, `${unique('agent')}/${'tools/'.repeat(33)}`);
    expect(clientId.length).to.be.within(230, 255);
    const { resource } = await createResource(service, ['read:orders']);
    const browser = new Browser(service);
    const started = await browser.authorize(clientId, redirectUri, {
      scope: 'openid profile offline_access',
      prompt: 'consent',
      resource: resource.indicator,
    });
    expect(started.location).to.equal('/sign-in');
    // The sign-in page names the client as its document does, and its host.
    const application = await browser.call('get', 'api/interaction/application');
    expect(application.body).to.deep.equal({
      id: clientId,
      name: 'Assistant',
      description: null,
      isThirdParty: true,
      branding: { logoUrl: 'https://agent.example/logo.png' },
      clientIdHost: new URL(clientId).host,
    });

    const submitted = await submitPasswordSignIn(browser, person);
    // No row says this client is first party: the person is asked.
    const consentPage = await browser.followToApplication(submitted.body.redirectTo, '/consent');
    expect(consentPage.pathname).to.equal('/consent');
    const consent = await browser.call('get', 'api/interaction/consent');
    expect(consent.statusCode, JSON.stringify(consent.body)).to.equal(200);
    expect(consent.body.application).to.include({ name: 'Assistant', clientIdHost: new URL(clientId).host });
    const allowed = await browser.call('post', 'api/interaction/consent', {});
    const back = await browser.followToApplication(allowed.body.redirectTo);
    expect(back.origin + back.pathname).to.equal(redirectUri);

    // The client finishes with openid-client, as a public client (no secret).
    const configuration = await client.discovery(new URL(`${service.url}/oidc`), clientId, undefined, client.None(), {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- the test service is plain http on 127.0.0.1
      execute: [client.allowInsecureRequests],
    });
    const tokens = await client.authorizationCodeGrant(
      configuration,
      back,
      { pkceCodeVerifier: started.verifier, expectedState: started.state },
      { resource: resource.indicator },
    );
    expect(tokens.claims()?.aud).to.equal(clientId);
    expect(decodeJwt(tokens.access_token)).to.include({ client_id: clientId, aud: resource.indicator });
    expect(tokens.refresh_token).to.be.a('string');
    const refreshed = await client.refreshTokenGrant(configuration, tokens.refresh_token!, {
      resource: resource.indicator,
    });
    expect(decodeJwt(refreshed.access_token)).to.include({ client_id: clientId });
    // The client may introspect and revoke its own token (a public client: only its own).
    const introspect = () =>
      service.http.post('oidc/token/introspection', { form: { token: refreshed.access_token, client_id: clientId } });
    expect((await introspect()).body).to.include({ active: true, client_id: clientId });
    await client.tokenRevocation(configuration, refreshed.access_token);
    expect((await introspect()).body).to.deep.equal({ active: false });
    // The audit log is written in batches: its entry shows within a moment.
    await waitForLog(service, { applicationId: clientId }, (entry) => entry.key === 'Interaction.SignIn.Submit');

    // One fetch served the authorization request, the pages, the code and the refresh.
    expect(documents.fetches(path)).to.equal(1);
    // A second sign-in is served from memory too.
    expect((await new Browser(service).authorize(clientId, redirectUri)).location).to.equal('/sign-in');
    expect(documents.fetches(path)).to.equal(1);
  });

  it('the grant is listed by the URL, among third-party applications, without a 500', async () => {
    const users = await service.api.get(`users?search=${person.username}`);
    const userId = users.body.find((user: { username: string }) => user.username === person.username).id;
    const grants = await service.api.get(`users/${userId}/grants?appType=thirdParty`);
    expect(grants.statusCode).to.equal(200);
    expect(grants.body.grants.map((grant: { payload: { clientId: string } }) => grant.payload.clientId)).to.satisfy(
      (ids: string[]) => ids.some((id) => id.startsWith('https://localhost:')),
    );
  });

  it("an API's backend exchanges the URL client's user token for another API (the MCP server calling on)", async () => {
    const setup = await delegationSetup(service);
    const { clientId } = published();
    const tokens = await signIn(service, { clientId, redirectUri }, setup.user, {
      scope: 'openid read:a',
      resource: setup.apiA.resource.indicator,
    });
    expect(decodeJwt(tokens.access_token)).to.include({ client_id: clientId, scope: 'read:a' });
    const issued = expectIssued(
      await exchange(service, setup.backend, {
        subject_token: tokens.access_token,
        subject_token_type: accessTokenType,
        resource: setup.apiB.resource.indicator,
        scope: 'read:b',
      }),
    );
    expect(decodeJwt(issued.access_token)).to.include({ sub: setup.user.id, client_id: setup.backend.id });
  });

  it('concurrent first lookups of one URL make one fetch', async () => {
    const { clientId, path } = published((id) => ({ body: documentAt(id), delayMs: 300 }));
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => new Browser(service).authorize(clientId, redirectUri)),
    );
    expect(answers.map((answer) => answer.location)).to.deep.equal(Array(5).fill('/sign-in'));
    expect(documents.fetches(path)).to.equal(1);
  });

  /** Each refusal is the provider's invalid_client (or its redirect URI error), saying why. */
  const refusals: Array<[string, (id: string) => Answer, RegExp]> = [
    [
      'a document naming another client_id',
      (id) => ({ body: documentAt(`${id}x`) }),
      /metadata document is not valid: its client_id is not the URL/,
    ],
    [
      'a document larger than 5 KB',
      (id) => ({ body: documentAt(id, { padding: 'x'.repeat(6000) }) }),
      /larger than 5120 bytes/,
    ],
    [
      'an answer that is not JSON (content type)',
      () => ({ body: '<html></html>', headers: { 'content-type': 'text/html' } }),
      /text\/html, not application\/json/,
    ],
    ['an answer that is not JSON (body)', () => ({ body: '{"client_id":' }), /the answer is not JSON/],
    ['a failing fetch', () => ({ status: 503, body: {} }), /could not be fetched: the answer was HTTP 503/],
    [
      'a shared-secret auth method',
      (id) => ({ body: documentAt(id, { token_endpoint_auth_method: 'client_secret_basic' }) }),
      /token_endpoint_auth_method: must be none or private_key_jwt/,
    ],
    [
      'a client_secret',
      (id) => ({ body: documentAt(id, { client_secret: 'shh' }) }),
      /client_secret: a client named by a URL has no shared secret/,
    ],
    [
      'no redirect URIs',
      (id) => ({ body: documentAt(id, { redirect_uris: [] }) }),
      /redirect_uris: must name at least one redirect URI/,
    ],
  ];
  for (const [what, answer, says] of refusals) {
    it(`refuses ${what}, and remembers the refusal (no second fetch)`, async () => {
      const { clientId, path } = published(answer);
      for (let attempt = 0; attempt < 2; attempt++) {
        const refused = await authorize(service, clientId);
        expect(refused.statusCode, JSON.stringify(refused.body)).to.equal(400);
        expect(refused.body.error).to.equal('invalid_client');
        expect(refused.body.error_description).to.match(says);
      }
      expect(documents.fetches(path)).to.equal(1);
    });
  }

  it('refuses a host not on the list without fetching, and URLs the draft forbids', async () => {
    const { clientId, path } = published(undefined, '127.0.0.1');
    const refused = await authorize(service, clientId);
    expect(refused.statusCode).to.equal(400);
    expect(refused.body).to.deep.include({ error: 'invalid_client' });
    expect(refused.body.error_description).to.match(/host 127\.0\.0\.1 is not among the hosts/);
    expect(documents.fetches(path)).to.equal(0);

    const forbidden: Array<[string, RegExp]> = [
      [documents.url('/agent.json').replace('https:', 'http:'), /must use https/],
      [documents.url('/agent.json#x'), /must not have a fragment/],
      [documents.url('/agent.json').replace('https://', 'https://user@'), /username or password/],
      [documents.url('/a/../agent.json'), /\. or \.\. path segments/],
      [documents.url('/'), /must have a path/],
      [documents.url(`/${'a'.repeat(255)}`), /at most 255 characters/],
    ];
    for (const [clientId, says] of forbidden) {
      const answer = await authorize(service, clientId);
      expect(answer.body, clientId).to.deep.include({ error: 'invalid_client' });
      expect(answer.body.error_description, clientId).to.match(says);
    }
  });

  it('refuses a redirect_uri the document does not list', async () => {
    const { clientId } = published();
    const refused = await authorize(service, clientId, { redirect_uri: 'http://evil.test/callback' });
    expect(refused.statusCode).to.equal(400);
    expect(refused.body.error).to.equal('invalid_redirect_uri');
  });

  it('refuses the grants of a confidential client (client credentials, token exchange)', async () => {
    const { clientId } = published();
    const credentials = await service.http.post('oidc/token', {
      form: { grant_type: 'client_credentials', client_id: clientId },
    });
    expect(credentials.statusCode, JSON.stringify(credentials.body)).to.equal(400);
    // The provider's answer for a grant type a client does not have.
    expect(credentials.body).to.deep.include({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
    });
    const exchange = await service.http.post('oidc/token', {
      form: {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_id: clientId,
        subject_token: 'x',
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      },
    });
    expect(exchange.statusCode, JSON.stringify(exchange.body)).to.equal(400);
    expect(exchange.body.error_description).to.equal('requested grant type is not allowed for this client');
  });

  it('says client_id_metadata_document_supported in discovery and RFC 8414 metadata', async () => {
    for (const path of ['oidc/.well-known/openid-configuration', '.well-known/oauth-authorization-server/oidc']) {
      expect((await service.http.get(path)).body.client_id_metadata_document_supported, path).to.equal(true);
    }
  });
});

describe('OIDC: Client ID Metadata Documents, off (the default)', () => {
  let service: TestService;
  let documents: DocumentServer;
  before(async () => {
    documents = await startDocumentServer();
    service = await startService();
  });
  after(async () => {
    await service.stop();
    await documents.close();
  });

  it('refuses a URL client_id with invalid_client, fetching nothing, and does not advertise the feature', async () => {
    const clientId = documents.url('/agent/client.json');
    documents.serve('/agent/client.json', { body: documentAt(clientId) });
    const refused = await authorize(service, clientId);
    expect(refused.statusCode).to.equal(400);
    expect(refused.body.error).to.equal('invalid_client');
    expect(refused.body.error_description).to.match(/this server does not accept those/);
    expect(documents.fetches('/agent/client.json')).to.equal(0);
    for (const path of ['oidc/.well-known/openid-configuration', '.well-known/oauth-authorization-server/oidc']) {
      expect((await service.http.get(path)).body, path).not.to.have.property('client_id_metadata_document_supported');
    }
  });
});

describe('OIDC: Client ID Metadata Documents behind the SSRF guard (private targets not allowed)', () => {
  let service: TestService;
  let documents: DocumentServer;
  before(async () => {
    documents = await startDocumentServer();
    service = await startService({
      env: {
        CLIENT_ID_METADATA_DOCUMENTS: 'true',
        CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'localhost,127.0.0.1',
        HOOKS_ALLOW_PRIVATE_TARGETS: 'false',
      },
    });
  });
  after(async () => {
    await service.stop();
    await documents.close();
  });

  it('refuses a document at a loopback address, by name or literal, naming the document address in the refusal', async () => {
    for (const host of ['localhost', '127.0.0.1']) {
      const path = `/${unique('agent')}/client.json`;
      const clientId = documents.url(path, host);
      documents.serve(path, { body: documentAt(clientId) });
      const refused = await authorize(service, clientId);
      expect(refused.statusCode, host).to.equal(400);
      expect(refused.body.error, host).to.equal('invalid_client');
      expect(refused.body.error_description, host).to.match(
        /^the client_id metadata document could not be fetched: the client's metadata document address (127\.0\.0\.1 is|localhost resolves to \S+,) a private or reserved address \(HOOKS_ALLOW_PRIVATE_TARGETS is off\)$/,
      );
      expect(documents.fetches(path), host).to.equal(0);
    }
  });
});

describe('OIDC: Client ID Metadata Documents cannot be used to make us fetch', () => {
  let service: TestService;
  let documents: DocumentServer;
  before(async () => {
    documents = await startDocumentServer();
    // localhost is named; 127.0.0.1 is allowed only through `*`.
    service = await startService({
      env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'localhost,*' },
    });
  });
  after(async () => {
    await service.stop();
    await documents.close();
  });

  /** A valid document at a fresh path on `host`; returns its client id and path. */
  const published = (host: string, query = '') => {
    const path = `/${unique('agent')}/client.json`;
    const clientId = documents.url(path, host) + query;
    documents.serve(path, { body: documentAt(clientId) });
    return { clientId, path };
  };
  /** What an authorization request for `clientId` gets: "sign-in" (it goes on), or the refusal's description. */
  async function attempt(clientId: string): Promise<string> {
    const answer = await service.http.get(`oidc/auth?${authorizeQuery(clientId)}`, {
      headers: { accept: 'application/json' },
      responseType: 'text',
      followRedirect: false,
    });
    return answer.headers.location === '/sign-in'
      ? 'sign-in'
      : `${answer.statusCode} ${(JSON.parse(answer.body) as { error_description: string }).error_description}`;
  }

  it('200 distinct URLs from anonymous requests: a bounded number of fetches, and working clients stay served', async () => {
    const working = published('localhost');
    expect(await attempt(working.clientId)).to.equal('sign-in');
    expect(documents.fetches(working.path)).to.equal(1);
    const before = documents.allFetches();

    // 100 distinct valid documents on one host, and 100 more whose URLs have query strings.
    const flood = [
      ...Array.from({ length: 100 }, () => published('127.0.0.1').clientId),
      ...Array.from({ length: 100 }, (_, index) => published('127.0.0.1', `?n=${index}`).clientId),
    ];
    const answers: string[] = [];
    for (let start = 0; start < flood.length; start += 20) {
      answers.push(...(await Promise.all(flood.slice(start, start + 20).map(attempt))));
    }
    const flooded = documents.allFetches() - before;
    expect(flooded, 'fetches made by the flood').to.be.at.most(30);
    const [distinct, queried] = [answers.slice(0, 100), answers.slice(100)];
    expect(distinct.filter((said) => said === 'sign-in')).to.have.length(flooded);
    const spent = distinct.filter((said) => said.startsWith('400 too many client metadata documents were fetched'));
    expect(spent).to.have.length(100 - flooded);
    expect(queried.filter((said) => !said.includes('query string only on a host named'))).to.deep.equal([]);

    // The working client is still served from memory; a new client on another host is still fetched.
    expect(await attempt(working.clientId)).to.equal('sign-in');
    expect(documents.fetches(working.path)).to.equal(1);
    const newcomer = published('localhost');
    expect(await attempt(newcomer.clientId)).to.equal('sign-in');
    expect(documents.fetches(newcomer.path)).to.equal(1);
    // A named host may use query strings.
    expect(await attempt(published('localhost', '?tenant=a').clientId)).to.equal('sign-in');
  });

  it('is off unless an operator turns it on, in development too (private targets allowed there)', async () => {
    const plain = await startService();
    try {
      const { clientId, path } = published('localhost');
      const refused = await authorize(plain, clientId);
      expect(refused.body.error_description).to.match(/this server does not accept those/);
      expect(documents.fetches(path)).to.equal(0);
    } finally {
      await plain.stop();
    }
  });
});
