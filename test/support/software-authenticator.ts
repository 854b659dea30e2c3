import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/*
 * A software WebAuthn authenticator for tests in Node: it answers the service's options as a
 * browser and a platform authenticator would (attestation "none", ES256 keys), built from the
 * specification (W3C WebAuthn level 2 §6.1, §6.5) rather than from the library the service uses.
 */

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const b64url = (data: Uint8Array) => Buffer.from(data).toString('base64url');

type Credential = { id: Buffer; key: KeyObject; rpId: string; userHandle: string; signCount: number };

const flags = { userPresent: 0x01, userVerified: 0x04, attestedData: 0x40 };

function authenticatorData(rpId: string, flagBits: number, signCount: number, attested?: Buffer): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(signCount);
  return Buffer.concat([sha256(rpId), Buffer.from([flagBits]), count, ...(attested ? [attested] : [])]);
}

/** The COSE_Key of an EC2 P-256 public key (RFC 9052 §7.1, RFC 9053 §7.1.1). */
function coseKey(key: KeyObject): Uint8Array {
  const jwk = key.export({ format: 'jwk' });
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ]),
  );
}

type CreationOptions = { challenge: string; rp: { id?: string }; user: { id: string } };
type RequestOptions = { challenge: string; rpId?: string; allowCredentials?: { id: string }[] };

export class SoftwareAuthenticator {
  readonly credentials: Credential[] = [];
  readonly origin: string;
  /** Counts uses, as most security keys do (0 stays 0, as many platform passkeys do). */
  private readonly counting: boolean;

  constructor(origin: string, counting = true) {
    this.origin = origin;
    this.counting = counting;
  }

  /** Answers `navigator.credentials.create()`: the JSON @simplewebauthn/browser sends (Logto's payload shape). */
  register(options: CreationOptions) {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(32);
    this.credentials.push({ id, key: privateKey, rpId, userHandle: options.user.id, signCount: 0 });
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, coseKey(publicKey)]);
    const data = authenticatorData(rpId, flags.userPresent | flags.userVerified | flags.attestedData, 0, attested);
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: this.origin });
    return {
      type: 'WebAuthn' as const,
      id: b64url(id),
      rawId: b64url(id),
      response: {
        clientDataJSON: b64url(Buffer.from(clientData)),
        attestationObject: b64url(
          isoCBOR.encode(
            new Map<string, unknown>([
              ['fmt', 'none'],
              ['attStmt', new Map()],
              ['authData', data],
            ]) as never,
          ),
        ),
        transports: ['internal' as const],
      },
      authenticatorAttachment: 'platform' as const,
      clientExtensionResults: {},
    };
  }

  /** Answers `navigator.credentials.get()` with the first allowed credential it holds (or `credential`). */
  authenticate(
    options: RequestOptions,
    { credential, origin = this.origin }: { credential?: Credential; origin?: string } = {},
  ) {
    const allowed = options.allowCredentials?.map((descriptor) => descriptor.id);
    const chosen = credential ?? this.credentials.find((held) => !allowed?.length || allowed.includes(b64url(held.id)));
    if (!chosen) {
      throw new Error('no credential for these options');
    }
    if (this.counting) {
      chosen.signCount += 1;
    }
    const data = authenticatorData(
      options.rpId ?? chosen.rpId,
      flags.userPresent | flags.userVerified,
      chosen.signCount,
    );
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin }));
    const signature = sign('sha256', Buffer.concat([data, sha256(clientData)]), chosen.key);
    return {
      type: 'WebAuthn' as const,
      id: b64url(chosen.id),
      rawId: b64url(chosen.id),
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(data),
        signature: b64url(signature),
        userHandle: chosen.userHandle,
      },
      clientExtensionResults: {},
    };
  }
}
