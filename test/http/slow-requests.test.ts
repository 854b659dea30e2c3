import { connect } from 'node:net';
import { expect } from 'chai';

import { startService, type TestService } from '../support/service.ts';

/**
 * Sends `head`, then one byte of the body every `everyMs` (never all of it); resolves with what the
 * server answered and how long after the first byte it closed the connection (or gave up at `giveUpMs`).
 */
function trickle(url: string, head: string, everyMs: number, giveUpMs: number) {
  return new Promise<{ answer: string; closedAfterMs: number | undefined }>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const started = Date.now();
    let answer = '';
    const socket = connect(Number(port), hostname, () => socket.write(head));
    const dripping = setInterval(() => socket.writable && socket.write('a'), everyMs);
    const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearInterval(dripping);
      clearTimeout(giveUp);
      const closedAfterMs = Date.now() - started;
      resolve({ answer, closedAfterMs: closedAfterMs < giveUpMs ? closedAfterMs : undefined });
    });
  });
}

/** Slow requests (slowloris): a request's headers and body must arrive within HTTP_REQUEST_TIMEOUT. */
describe('HTTP: slow request bodies and headers are cut off', () => {
  let service: TestService;
  before(async () => {
    service = await startService({ env: { HTTP_REQUEST_TIMEOUT: '2' } });
  });
  after(() => service.stop());

  it('a body trickled a byte at a time: 408 request.timeout and the connection closed within the limit', async () => {
    // The token endpoint reads its body before anything else (no credentials to refuse first).
    const head =
      'POST /oidc/token HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n';
    const { answer, closedAfterMs } = await trickle(service.url, head, 200, 8000);
    expect(closedAfterMs, 'the connection is closed').to.be.a('number');
    expect(closedAfterMs).to.be.within(1900, 3600);
    expect(answer).to.match(/^HTTP\/1\.1 408 /);
    expect(answer).to.include('"code":"request.timeout"');
  });

  it('headers trickled a byte at a time: closed within the limit too', async () => {
    const { answer, closedAfterMs } = await trickle(service.url, 'GET /api/status HTTP/1.1\r\nX-Slow: ', 200, 8000);
    expect(closedAfterMs, 'the connection is closed').to.be.a('number');
    expect(closedAfterMs).to.be.within(1900, 3600);
    expect(answer).to.match(/^HTTP\/1\.1 408 /);
  });

  it('a request sent at once is served as before, and an idle keep-alive connection is not cut at the limit', async () => {
    const socket = connect(Number(new URL(service.url).port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    const ask = () => socket.write('GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await new Promise((resolve) => socket.once('connect', resolve));
    ask();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(socket.destroyed).to.equal(false);
    ask();
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.destroy();
    expect(answer.match(/HTTP\/1\.1 (\d+)/g)).to.have.length(2);
    expect(answer).not.to.include('408');
  });
});
