import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';

import { hmacSigner, rotatedKeys, signingKeysAt } from '../../lib/hooks/signing/signing-keys.ts';
import { eventually } from '../support/eventually.ts';
import { type Received, Receiver } from './receiver.ts';
import { createHook, type HooksService, startHooksService } from './support.ts';

/** The 32 raw bytes of a `whpk_` key, as the public key node:crypto verifies with (SPKI = fixed prefix + raw key). */
const publicKeyFromWhpk = (whpk: string) =>
  createPublicKey({
    key: Buffer.concat([
      Buffer.from('302a300506032b6570032100', 'hex'),
      Buffer.from(whpk.replace(/^whpk_/, ''), 'base64'),
    ]),
    format: 'der',
    type: 'spki',
  });

const signaturesOf = (request: Received) => String(request.headers['webhook-signature']).split(' ');

/** Whether a `v1a,` signature of the request verifies with the `whpk_` key (Standard Webhooks' signed content). */
function verifiesV1a(request: Received, signature: string, whpk: string): boolean {
  const [version, value] = signature.split(',');
  const content = `${String(request.headers['webhook-id'])}.${String(request.headers['webhook-timestamp'])}.${request.body}`;
  return version === 'v1a' && verify(null, Buffer.from(content), publicKeyFromWhpk(whpk), Buffer.from(value, 'base64'));
}

/** docs/webhooks.md's Ed25519 verifier, run as written. */
function documentedVerifier(): (publicKey: string, rawBody: string, headers: unknown) => boolean {
  const document = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const code = [...document.matchAll(/```js\n([\s\S]*?)```/g)]
    .map((match) => match[1].replace(/^import .*$/gm, ''))
    .find((block) => block.includes('function verifyEd25519('))!;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the documentation's snippet as written
  return new Function('createPublicKey', 'verifySignature', 'Buffer', `${code}; return verifyEd25519;`)(
    createPublicKey,
    verify,
    Buffer,
  ) as never;
}

const whsec = (signingKey: string) => `whsec_${Buffer.from(signingKey).toString('base64')}`;

describe('hooks: signature schemes and key rotation', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService({ env: { SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64') } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  /** Emits one event and returns the request that delivered it to `hookId`. */
  async function deliverOne(hookId: string): Promise<Received> {
    const before = receiver.requests.length;
    await service.emit('User.Created', { data: { id: 'u1' } });
    return eventually(
      () => receiver.requests.slice(before).find((candidate) => candidate.body.includes(hookId)),
      15_000,
      'the delivery',
    );
  }

  /** Ends the overlap of the hook's last rotation now, as the clock would after HOOKS_SIGNATURE_OVERLAP. */
  const endOverlap = (hookId: string) =>
    service
      .db('hooks')
      .where({ id: hookId })
      .update({ previous_key_until: Date.now() - 1000 });

  const disable = (hookId: string) => service.api.patch(`hooks/${hookId}`, { json: { enabled: false } });

  it('an ed25519 hook signs v1a (verified with node:crypto and the published whpk_ key), Logto header still HMAC', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created'], { signatureScheme: 'ed25519' });
    expect(hook).to.include({ signatureScheme: 'ed25519' });
    const key = await service.api.get(`hooks/${hook.id}/signing-key`);
    expect(key.statusCode).to.equal(200);
    expect(Object.keys(key.body).sort()).to.deep.equal(['publicKey', 'scheme']);
    expect(key.body.scheme).to.equal('ed25519');
    expect(key.body.publicKey).to.match(/^whpk_[A-Za-z0-9+/]{43}=$/);

    const request = await deliverOne(hook.id);
    const signatures = signaturesOf(request);
    expect(signatures).to.have.length(1);
    expect(signatures[0]).to.match(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(verifiesV1a(request, signatures[0], key.body.publicKey)).to.equal(true);
    // Another key, or another body, does not verify.
    const another = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
    const other = `whpk_${another.subarray(12).toString('base64')}`;
    expect(verifiesV1a(request, signatures[0], other)).to.equal(false);
    expect(verifiesV1a({ ...request, body: `${request.body} ` }, signatures[0], key.body.publicKey)).to.equal(false);
    // The receiver's snippet in docs/webhooks.md agrees.
    const documented = documentedVerifier();
    expect(documented(key.body.publicKey, request.body, request.headers)).to.equal(true);
    expect(documented(other, request.body, request.headers)).to.equal(false);
    expect(documented(key.body.publicKey, `${request.body} `, request.headers)).to.equal(false);
    // The standardwebhooks package (v1 only) finds no signature it can check: v1a is not HMAC.
    expect(() =>
      new Webhook(whsec(hook.signingKey)).verify(request.body, request.headers as Record<string, string>),
    ).to.throw();

    // The JWK set a receiver may fetch without a token holds the same key.
    const jwks = (await (await fetch(`${service.url}/api/hooks/${hook.id}/jwks`)).json()) as {
      keys: Array<{ x: string }>;
    };
    expect(jwks.keys).to.have.length(1);
    expect(Buffer.from(jwks.keys[0].x, 'base64url').toString('base64')).to.equal(key.body.publicKey.slice(5));
    await disable(hook.id);
  });

  it('the private key is sealed at rest; an HMAC hook shows its scheme only', async () => {
    const ed = await createHook(service, receiver.url, ['PostSignIn'], { signatureScheme: 'ed25519' });
    const row = await service.db('hooks').where({ id: ed.id }).first();
    expect(row.signing_private_key).to.match(/^enc:v1:/);
    expect(row.signing_key).to.match(/^enc:v1:/);

    const hmac = await createHook(service, receiver.url, ['PostSignIn']);
    expect(hmac).to.include({ signatureScheme: 'hmac-sha256' });
    const key = await service.api.get(`hooks/${hmac.id}/signing-key`);
    expect(key.body).to.deep.equal({ scheme: 'hmac-sha256' });
    const jwks = await fetch(`${service.url}/api/hooks/${hmac.id}/jwks`);
    expect(await jwks.json()).to.deep.equal({ keys: [] });
    expect((await fetch(`${service.url}/api/hooks/nosuchhook/jwks`)).status).to.equal(404);
    expect((await service.api.get('hooks/nosuchhook/signing-key')).statusCode).to.equal(404);
  });

  it('refuses an unknown scheme (400 guard.invalid_input)', async () => {
    const response = await service.api.post('hooks', {
      json: { events: ['User.Created'], config: { url: receiver.url }, signatureScheme: 'rsa' },
    });
    expect(response.statusCode).to.equal(400);
    expect(response.body.code).to.equal('guard.invalid_input');
  });

  it('ed25519 rotation: both keys sign during the overlap, then only the new one', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created'], { signatureScheme: 'ed25519' });
    const old = (await service.api.get(`hooks/${hook.id}/signing-key`)).body.publicKey as string;
    const rotated = await service.api.patch(`hooks/${hook.id}/signing-key`);
    expect(rotated.statusCode).to.equal(200);
    expect(rotated.body.signingKey).to.not.equal(hook.signingKey);
    expect(rotated.body).to.not.have.property('keys');
    const current = (await service.api.get(`hooks/${hook.id}/signing-key`)).body.publicKey as string;
    expect(current).to.not.equal(old);

    const during = await deliverOne(hook.id);
    const [first, second] = signaturesOf(during);
    expect(signaturesOf(during)).to.have.length(2);
    expect(verifiesV1a(during, first, current)).to.equal(true);
    expect(verifiesV1a(during, second, old)).to.equal(true);
    expect(documentedVerifier()(old, during.body, during.headers)).to.equal(true);
    const jwks = (await (await fetch(`${service.url}/api/hooks/${hook.id}/jwks`)).json()) as { keys: unknown[] };
    expect(jwks.keys).to.have.length(2);

    await endOverlap(hook.id);
    const after = await deliverOne(hook.id);
    expect(signaturesOf(after)).to.have.length(1);
    expect(verifiesV1a(after, signaturesOf(after)[0], current)).to.equal(true);
    await disable(hook.id);
  });

  it('HMAC rotation: both secrets sign v1 during the overlap (each verifies with standardwebhooks), then only the new one', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created']);
    const { signingKey } = (await service.api.patch(`hooks/${hook.id}/signing-key`)).body as { signingKey: string };

    const during = await deliverOne(hook.id);
    expect(signaturesOf(during)).to.have.length(2);
    expect(signaturesOf(during).every((signature) => signature.startsWith('v1,'))).to.equal(true);
    const headers = during.headers as Record<string, string>;
    expect(() => new Webhook(whsec(signingKey)).verify(during.body, headers)).to.not.throw();
    expect(() => new Webhook(whsec(hook.signingKey)).verify(during.body, headers)).to.not.throw();
    // Each signature is the one of its key: the old one alone verifies with the old secret.
    const oldOnly = { ...headers, 'webhook-signature': signaturesOf(during)[1] };
    expect(() => new Webhook(whsec(hook.signingKey)).verify(during.body, oldOnly)).to.not.throw();
    expect(() => new Webhook(whsec(signingKey)).verify(during.body, oldOnly)).to.throw();

    await endOverlap(hook.id);
    const after = await deliverOne(hook.id);
    expect(signaturesOf(after)).to.have.length(1);
    const afterHeaders = after.headers as Record<string, string>;
    expect(() => new Webhook(whsec(signingKey)).verify(after.body, afterHeaders)).to.not.throw();
    expect(() => new Webhook(whsec(hook.signingKey)).verify(after.body, afterHeaders)).to.throw();
    await disable(hook.id);
  });

  it('a change of scheme through PATCH /hooks/:id is a rotation: v1a and the old v1 during the overlap', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created']);
    const patched = await service.api.patch(`hooks/${hook.id}`, { json: { signatureScheme: 'ed25519' } });
    expect(patched.statusCode).to.equal(200);
    expect(patched.body).to.include({ signatureScheme: 'ed25519', signingKey: hook.signingKey });
    const { publicKey } = (await service.api.get(`hooks/${hook.id}/signing-key`)).body as { publicKey: string };

    const request = await deliverOne(hook.id);
    const [v1a, v1] = signaturesOf(request);
    expect(verifiesV1a(request, v1a, publicKey)).to.equal(true);
    const oldOnly = { ...(request.headers as Record<string, string>), 'webhook-signature': v1 };
    expect(() => new Webhook(whsec(hook.signingKey)).verify(request.body, oldOnly)).to.not.throw();
    await disable(hook.id);
  });
});

describe('hooks: rotated keys', () => {
  const hmac = hmacSigner('AbCdEfGhIjKlMnOpQrStUvWxYz012345');
  const now = 1_800_000_000_000;

  it('without an overlap (HOOKS_SIGNATURE_OVERLAP=0) only the new key signs', () => {
    const { signingKey, keys } = rotatedKeys(hmac, 'hmac-sha256', { rotate: true, now, overlapMs: 0 });
    expect(signingKey).to.not.equal(hmac.signingKey);
    expect(keys).to.deep.equal({ current: { scheme: 'hmac-sha256', secret: signingKey } });
  });

  it('a second rotation inside the window keeps the key before it, not the oldest: two signatures at most', () => {
    const first = rotatedKeys(hmac, 'ed25519', { rotate: false, now, overlapMs: 1000 });
    expect(first.signingKey).to.equal(hmac.signingKey);
    expect(first.keys.previous).to.deep.equal(hmac.keys.current);
    const second = rotatedKeys(first, 'ed25519', { rotate: true, now: now + 10, overlapMs: 1000 });
    expect(second.keys.previous).to.deep.equal(first.keys.current);
    expect(signingKeysAt(second.keys, now + 500)).to.have.length(2);
    expect(signingKeysAt(second.keys, now + 1010)).to.deep.equal([second.keys.current]);
  });
});
