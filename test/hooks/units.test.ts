import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';

import { decideOutcome, parseRetryAfter } from '../../lib/hooks/delivery/retry.ts';
import { hookEventGroup, hookEventGroups, hookEvents, isHookEvent } from '../../lib/hooks/events.ts';
import { deliveriesOf } from '../../lib/hooks/outbox.ts';
import { samplePayloads } from '../../lib/hooks/samples.ts';
import { requestHeaders, signatureHeaders } from '../../lib/hooks/signing/signature.ts';
import { hmacSigner } from '../../lib/hooks/signing/signing-keys.ts';
import { isPublicAddress } from '../../lib/http/outbound/outbound-guard.ts';

describe('hooks: event catalogue', () => {
  it('has the 27 events of the specification in three groups, and a sample for each', () => {
    expect(hookEvents).to.have.length(27);
    expect(new Set(hookEvents).size).to.equal(27);
    expect(hookEventGroups.interaction).to.deep.equal(['PostRegister', 'PostSignIn', 'PostResetPassword']);
    expect(hookEventGroups.data).to.have.length(22);
    expect(hookEventGroups.exception).to.deep.equal(['Identifier.Lockout', 'Message.RateLimited']);
    expect(hookEventGroup('User.Created')).to.equal('data');
    expect(isHookEvent('PostSignIn')).to.equal(true);
    expect(isHookEvent('PostSignInAdaptiveMfaTriggered')).to.equal(false);
    expect(Object.keys(samplePayloads).sort()).to.deep.equal([...hookEvents].sort());
  });
});

describe('hooks: delivery bodies', () => {
  const subscription = { hookId: 'hook-1', payload: 'full' as const, excludeApplicationIds: [] };
  const createdAt = Date.UTC(2026, 10, 24);
  const envelope = { hookId: 'hook-1', event: 'Organization.Created', createdAt: new Date(createdAt).toISOString() };
  const bodyOf = (payload: Record<string, unknown>) => {
    const [delivery] = deliveriesOf([subscription], 'Organization.Created', createdAt, payload);
    return delivery.payload;
  };

  it('is the envelope, then the fields in their order, as one object serialised would be', () => {
    const payloads: Array<Record<string, unknown>> = [
      {},
      {
        data: { id: 'o1', name: 'ünïcode "quoted"', nested: { 2: 'b', 1: 'a' } },
        path: '/api/organizations',
        skip: undefined,
      },
      // The fields cannot override the envelope, and an index-like key goes first in an object.
      { event: 'Forged', data: null, hookId: 'other', createdAt: 'then' },
      { 7: 'seven', data: null },
    ];
    for (const payload of payloads) {
      const body = bodyOf(payload);
      expect(body).to.equal(JSON.stringify(Object.assign({ ...envelope }, payload, envelope)));
      expect(JSON.parse(body)).to.include(envelope);
    }
  });
});

describe('hooks: retry decisions', () => {
  const schedule = [5, 300, 1800];
  const noJitter = () => 0;
  const fullJitter = () => 0.999999;

  it('2xx succeeds; 410 fails and disables; other 4xx and 3xx fail at once', () => {
    expect(decideOutcome({ statusCode: 200 }, 1, schedule)).to.deep.equal({ status: 'succeeded' });
    expect(decideOutcome({ statusCode: 204 }, 4, schedule)).to.deep.equal({ status: 'succeeded' });
    expect(decideOutcome({ statusCode: 410 }, 1, schedule)).to.deep.equal({ status: 'failed', disableHook: true });
    for (const statusCode of [301, 302, 400, 401, 403, 404, 422]) {
      expect(decideOutcome({ statusCode }, 1, schedule), String(statusCode)).to.deep.equal({
        status: 'failed',
        disableHook: false,
      });
    }
    expect(decideOutcome({ refused: true }, 1, schedule)).to.deep.equal({ status: 'failed', disableHook: false });
  });

  it('retries network errors, 408, 429 and 5xx per the schedule, plus up to 20%, then fails', () => {
    for (const statusCode of [undefined, 408, 429, 500, 502, 503, 504]) {
      expect(decideOutcome({ statusCode }, 1, schedule, noJitter)).to.deep.equal({ status: 'pending', waitMs: 5000 });
    }
    expect(decideOutcome({ statusCode: 500 }, 2, schedule, noJitter)).to.deep.equal({
      status: 'pending',
      waitMs: 300_000,
    });
    expect(decideOutcome({ statusCode: 500 }, 3, schedule, fullJitter)).to.deep.equal({
      status: 'pending',
      waitMs: 2_160_000,
    });
    expect(decideOutcome({ statusCode: 500 }, 4, schedule)).to.deep.equal({ status: 'failed', disableHook: false });
    for (let run = 0; run < 100; run++) {
      const outcome = decideOutcome({ statusCode: 503 }, 1, schedule) as { waitMs: number };
      expect(outcome.waitMs).to.be.within(5000, 6000);
    }
  });

  it('a longer Retry-After replaces the wait; a shorter one does not; capped at a day', () => {
    expect(decideOutcome({ statusCode: 429, retryAfterMs: 60_000 }, 1, schedule, noJitter)).to.deep.equal({
      status: 'pending',
      waitMs: 60_000,
    });
    expect(decideOutcome({ statusCode: 503, retryAfterMs: 1000 }, 1, schedule, noJitter)).to.deep.equal({
      status: 'pending',
      waitMs: 5000,
    });
    expect(decideOutcome({ statusCode: 503, retryAfterMs: 10 * 86_400_000 }, 1, schedule, noJitter)).to.deep.equal({
      status: 'pending',
      waitMs: 86_400_000,
    });
    // Retry-After does not extend the schedule.
    expect(decideOutcome({ statusCode: 503, retryAfterMs: 1000 }, 4, schedule)).to.deep.equal({
      status: 'failed',
      disableHook: false,
    });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).to.equal(120_000);
    expect(parseRetryAfter(' 0 ', now)).to.equal(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:01:30 GMT', now)).to.equal(90_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).to.equal(0);
    expect(parseRetryAfter('soon', now)).to.equal(undefined);
    expect(parseRetryAfter('-5', now)).to.equal(undefined);
    expect(parseRetryAfter(undefined, now)).to.equal(undefined);
  });
});

describe('hooks: address classification', () => {
  const refused = [
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '192.0.2.1',
    '198.51.100.1',
    '203.0.113.1',
    '198.18.0.1',
    '240.0.0.1',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    'fe80::1',
    'fc00::1',
    'fd00::abcd',
    'ff02::1',
    '64:ff9b::a00:1',
    '2002:7f00:1::1',
    '2001::1',
    '2001:db8::1',
    'not an address',
  ];
  const allowed = [
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '::ffff:8.8.8.8',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
  ];

  it('refuses loopback, private, link-local, unique-local, CGNAT, multicast, unspecified, reserved and embedded forms', () => {
    for (const address of refused) {
      expect(isPublicAddress(address), address).to.equal(false);
    }
  });

  it('allows public unicast addresses', () => {
    for (const address of allowed) {
      expect(isPublicAddress(address), address).to.equal(true);
    }
  });
});

describe('hooks: signatures', () => {
  it('signs as Logto (hex HMAC of the body) and as Standard Webhooks (key = UTF-8 bytes of the signing key)', () => {
    const key = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
    const body = '{"hookId":"h","event":"PostSignIn","createdAt":"2025-01-01T00:00:00.000Z","ü":"ñ"}';
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders(hmacSigner(key), 'msg1', body, timestamp);
    expect(headers['logto-signature-sha-256']).to.equal(createHmac('sha256', key).update(body).digest('hex'));
    expect(headers['webhook-signature']).to.equal(
      `v1,${createHmac('sha256', key).update(`msg1.${timestamp}.${body}`).digest('base64')}`,
    );
    expect(new Webhook(`whsec_${Buffer.from(key).toString('base64')}`).verify(body, headers)).to.have.property(
      'ü',
      'ñ',
    );
  });

  it("keeps the hook's headers but not over the service's own", () => {
    const headers = requestHeaders(
      {
        url: 'https://x',
        headers: { 'X-Api-Key': 'k', 'Content-Type': 'text/plain', 'Webhook-Signature': 'v1,forged' },
      },
      hmacSigner('key'),
      'id1',
      '{}',
    );
    expect(headers['x-api-key']).to.equal('k');
    expect(headers['content-type']).to.equal('application/json');
    expect(headers['webhook-signature']).not.to.equal('v1,forged');
    expect(Object.keys(headers).filter((name) => name.toLowerCase() === 'content-type')).to.have.length(1);
  });
});

describe('hooks: the verification snippets of docs/webhooks.md', () => {
  const document = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const blocks = [...document.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1].replace(/^import .*$/gm, ''));
  const key = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
  const body = '{"hookId":"h","event":"PostSignIn","createdAt":"2025-01-01T00:00:00.000Z"}';
  // Signed when these tests run, not when the suite loads: the signature's timestamp must be recent.
  let headers: ReturnType<typeof requestHeaders>;
  before(() => {
    headers = requestHeaders({ url: 'https://x' }, hmacSigner(key), 'dl1', body);
  });

  it('the Node-only Standard Webhooks check accepts our signature and refuses another key', () => {
    const code = blocks.find((block) => block.includes('function verify('))!;
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the documentation's snippet as written
    const verify = new Function('createHmac', 'timingSafeEqual', `${code}; return verify;`)(
      createHmac,
      timingSafeEqual,
    );
    expect(verify(key, body, headers)).to.equal(true);
    expect(verify('another key', body, headers)).to.equal(false);
    expect(verify(key, `${body} `, headers)).to.equal(false);
  });

  it('the Logto header check accepts our signature', () => {
    const code = blocks.find((block) => block.includes('logto-signature-sha-256'))!;
    const run = (signingKey: string) =>
      // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the documentation's snippet as written
      new Function('createHmac', 'timingSafeEqual', 'signingKey', 'rawBody', 'headers', `${code}; return valid;`)(
        createHmac,
        timingSafeEqual,
        signingKey,
        body,
        headers,
      );
    expect(run(key)).to.equal(true);
    expect(run('another key')).to.equal(false);
  });

  it('the standardwebhooks snippet verifies', () => {
    const code = blocks.find((block) => block.includes('new Webhook('))!;
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the documentation's snippet as written
    const payload = new Function('Webhook', 'Buffer', 'signingKey', 'rawBody', 'headers', `${code}; return payload;`)(
      Webhook,
      Buffer,
      key,
      body,
      headers,
    );
    expect(payload).to.have.property('event', 'PostSignIn');
  });
});
