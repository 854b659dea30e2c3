import type { AccessTokenClaims } from '../tokens/access-tokens.ts';

/** RFC 8693 §4.1: who acts, for whom the nested `act` acted before. */
export type ActClaim = { sub: string; client_id?: string; act?: ActClaim };

/** RFC 8693 §4.4: who may act for the token's subject. */
export type MayActClaim = { sub?: string; client_id?: string };

/**
 * What an exchange needs from a subject or actor token, whatever its form (JWT or opaque): when it
 * ends, who it was issued to, its delegation claims and its DPoP key (RFC 9449 `cnf.jkt`).
 */
export type TokenFacts = {
  clientId: string;
  exp: number;
  act?: ActClaim;
  mayAct?: MayActClaim;
  /** The application whose delegation policy governs the token (`delegation_client_id`), when not its holder. */
  delegationClientId?: string;
  jkt?: string;
};

/**
 * The claim an exchange without an actor carries the subject token's governing application in, so
 * that its delegation policy travels with the user's token to the next exchange (beside `may_act`).
 */
export const delegationClientClaim = 'delegation_client_id';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const stringOrUndefined = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** Our own tokens carry these claims, so a shape we would not issue is dropped rather than trusted. */
function actOf(value: unknown): ActClaim | undefined {
  if (!isObject(value) || typeof value.sub !== 'string') {
    return undefined;
  }
  const clientId = stringOrUndefined(value.client_id);
  const nested = actOf(value.act);
  return { sub: value.sub, ...(clientId && { client_id: clientId }), ...(nested && { act: nested }) };
}

function mayActOf(value: unknown): MayActClaim | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const sub = stringOrUndefined(value.sub);
  const clientId = stringOrUndefined(value.client_id);
  return sub || clientId ? { ...(sub && { sub }), ...(clientId && { client_id: clientId }) } : undefined;
}

function factsOf(clientId: string, exp: number, claims: Record<string, unknown>, jkt: unknown): TokenFacts {
  const act = actOf(claims.act);
  const mayAct = mayActOf(claims.may_act);
  const key = stringOrUndefined(jkt);
  const delegationClientId = stringOrUndefined(claims[delegationClientClaim]);
  return {
    clientId,
    exp,
    ...(act && { act }),
    ...(mayAct && { mayAct }),
    ...(delegationClientId && { delegationClientId }),
    ...(key && { jkt: key }),
  };
}

export const factsOfJwt = (claims: AccessTokenClaims): TokenFacts =>
  factsOf(claims.client_id, claims.exp, claims, isObject(claims.cnf) ? claims.cnf.jkt : undefined);

/** An opaque token of the provider's store (AccessToken or ClientCredentials). */
export const factsOfOpaque = (token: {
  clientId?: string;
  exp?: number;
  extra?: Record<string, unknown>;
  jkt?: string;
}): TokenFacts => factsOf(token.clientId ?? '', token.exp ?? 0, token.extra ?? {}, token.jkt);

/**
 * An outside issuer's verified JWT: the same claims, read the same way. Its `client_id` (or `azp`) is
 * the outside issuer's client, named in no policy of ours.
 */
export const factsOfOutsideJwt = (claims: Record<string, unknown>): TokenFacts =>
  factsOf(
    stringOrUndefined(claims.client_id) ?? stringOrUndefined(claims.azp) ?? '',
    typeof claims.exp === 'number' ? claims.exp : 0,
    claims,
    isObject(claims.cnf) ? claims.cnf.jkt : undefined,
  );
