import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';

import { logtoManagementClient, startService, type TestService } from '../support/service.ts';

type RawResponse = { statusCode: number; contentType: string | undefined; body: string };

/** A request Node's client would send as given (a header of any size). */
function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ statusCode: response.statusCode!, contentType: response.headers['content-type'], body }),
      );
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** Bytes that are not HTTP, and what the server answers before it closes the connection. */
function rawBytes(url: string, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('requests: a body is what it says, and every API error is JSON', () => {
  let service: TestService;
  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  const userCount = async () =>
    Number((await service.api.get('users', { searchParams: { page: 1, page_size: 1 } })).headers['total-number']);
  const keyIds = async () =>
    ((await service.api.get('configs/oidc/private-keys')).body as Array<{ id: string }>).map((key) => key.id).sort();

  it('a body that is not JSON is 415 before anything is done: no user made, no key rotated', async () => {
    const users = await userCount();
    const keys = await keyIds();
    const attempts: Array<[string, string, string]> = [
      ['users', '{"username":"mallory"}', 'text/plain'],
      ['users', 'username=mallory', 'application/x-www-form-urlencoded'],
      ['users', '{"username":"mallory"}', 'application/json; charset=iso-8859-1'],
      ['users', '{"username":"mallory"}', 'multipart/form-data; boundary=x'],
      ['configs/oidc/private-keys/rotate', '{"signingKeyAlgorithm":"RSA"}', 'text/plain'],
      ['configs/oidc/private-keys/rotate', '', 'text/plain'],
    ];
    for (const [path, body, contentType] of attempts) {
      const response = await service.api.post(path, { body, headers: { 'content-type': contentType } });
      expect(response.statusCode, `${path} ${contentType}`).to.equal(415);
      expect(response.body).to.include({ code: 'request.unsupported_media_type' });
    }
    // JSON without saying so is not read either.
    const unlabelled = await service.api.post('users', {
      body: '{"username":"mallory"}',
      headers: { 'content-type': '' },
    });
    expect(unlabelled.statusCode).to.equal(415);

    expect(await userCount()).to.equal(users);
    expect(await keyIds()).to.deep.equal(keys);
  });

  it('JSON by any of its names is read: application/json with or without charset, application/*+json', async () => {
    for (const contentType of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/merge-patch+json',
    ]) {
      const response = await service.api.post('users', {
        body: '{"name":"Ada"}',
        headers: { 'content-type': contentType },
      });
      expect(response.statusCode, contentType).to.equal(200);
      expect(response.body.name).to.equal('Ada');
    }
  });

  it('a rotation as @logto/api sends it (JSON `{}`), with no body at all, or with an empty JSON body works', async () => {
    const apiClient = logtoManagementClient(service);
    const before = await keyIds();
    const rotated = await apiClient.POST('/api/configs/oidc/{keyType}/rotate', {
      params: { path: { keyType: 'private-keys' } },
      body: {},
    });
    expect(rotated.response.status, JSON.stringify(rotated.error)).to.equal(200);
    expect(rotated.response.headers.get('content-type')).to.match(/^application\/json/);
    const after = await keyIds();
    expect(after).to.not.deep.equal(before);

    // A rotation makes the cached management token's key a previous one: still valid.
    const bare = await service.api.post('configs/oidc/private-keys/rotate');
    expect(bare.statusCode, JSON.stringify(bare.body)).to.equal(200);
    const empty = await service.api.post('configs/oidc/private-keys/rotate', {
      body: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.statusCode, JSON.stringify(empty.body)).to.equal(200);
    expect(await keyIds()).to.have.length(after.length + 2);
  });

  it('a body over 1 MB is 413, and invalid UTF-8 is 400', async () => {
    const large = await service.api.post('users', {
      body: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(large.statusCode).to.equal(413);
    expect(large.body).to.include({ code: 'request.entity_too_large' });
    const chunked = await service.api.got.post('users', {
      // A stream: sent chunked, with no Content-Length to refuse it by.
      body: Readable.from(Array.from({ length: 20 }, () => Buffer.alloc(64 * 1024, 0x20))),
      headers: { 'content-type': 'application/json' },
    });
    expect(chunked.statusCode).to.equal(413);
    const latin1 = await service.api.got.post('users', {
      body: Buffer.from('{"name":"\xe9"}', 'latin1'),
      headers: { 'content-type': 'application/json' },
    });
    expect(latin1.statusCode).to.equal(400);
    expect(latin1.body).to.include({ code: 'guard.invalid_input' });
    // A code point cut between two chunks is still one character; one cut off at the end is not UTF-8.
    const split = await service.api.got.post('users', {
      body: Readable.from([Buffer.from('{"name":"Ad\xc3', 'latin1'), Buffer.from('\xa9"}', 'latin1')]),
      headers: { 'content-type': 'application/json' },
    });
    expect(split.statusCode, JSON.stringify(split.body)).to.equal(200);
    expect((split.body as { name?: string }).name).to.equal('Ad\u00e9');
    const truncated = await service.api.got.post('users', {
      body: Buffer.from('{"name":"Ad"}\xc3', 'latin1'),
      headers: { 'content-type': 'application/json' },
    });
    expect(truncated.statusCode).to.equal(400);
    expect(truncated.body).to.include({ code: 'guard.invalid_input' });
  });

  it('a compressed body is 415 with the reason, and nothing is made', async () => {
    const users = await userCount();
    const response = await service.api.got.post('users', {
      body: gzipSync('{"username":"zipped"}'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(response.statusCode).to.equal(415);
    expect(response.body).to.deep.include({
      code: 'request.unsupported_media_type',
      message: 'Compressed request bodies (content-encoding: gzip) are not accepted.',
    });
    expect(await userCount()).to.equal(users);
  });

  it('headers over 16 KB are answered 431 with a JSON error, and bytes that are not HTTP 400 with one', async () => {
    const response = await rawRequest(`${service.url}/api/users`, { headers: { 'x-padding': 'x'.repeat(20 * 1024) } });
    expect(response.statusCode).to.equal(431);
    expect(response.contentType).to.match(/^application\/json/);
    expect(JSON.parse(response.body)).to.deep.equal({
      code: 'request.header_fields_too_large',
      message: 'The request headers are larger than 16 KB.',
    });

    const answer = await rawBytes(service.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).to.include({ code: 'request.malformed' });
  });

  it('an unknown path under /api is a JSON 404, a wrong method a JSON 405, like every other API error', async () => {
    for (const path of ['nothing-here', 'users/x/nothing', 'configs']) {
      const response = await service.api.get(path);
      expect(response.statusCode, path).to.equal(404);
      expect(response.headers['content-type']).to.match(/^application\/json/);
      expect(response.body).to.include({ code: 'request.not_found' });
      expect(response.body.message).to.be.a('string');
    }
    const unknownPost = await service.api.post('nothing-here', { json: {} });
    expect(unknownPost.statusCode).to.equal(404);
    expect(unknownPost.body).to.include({ code: 'request.not_found' });

    for (const method of ['PUT', 'PROPFIND']) {
      const response = await service.api.got('users', { method: method as 'PUT' });
      expect(response.statusCode, method).to.equal(405);
      expect(response.body).to.include({ code: 'request.method_not_allowed' });
    }
    // Without a token, an unknown path is refused as every management path is.
    const anonymous = await service.http.get('api/nothing-here');
    expect(anonymous.statusCode).to.equal(401);
    expect(anonymous.body).to.include({ code: 'auth.authorization_header_missing' });
    // Outside /api, pages keep their own answers.
    const page = await service.http.get('nothing-here', { responseType: 'text' });
    expect(page.statusCode).to.equal(404);
  });
});
