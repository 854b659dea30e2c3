import { got, type Response, TimeoutError } from 'got';

import { RequestError } from '../http/errors.ts';
import type { IdpSettings } from './external-idp.ts';
import { idpEndpoint } from './schemas.ts';

/**
 * A connector is saved only if its IdP answers: its discovery document (found at its issuer), and
 * each endpoint it names or that document names. "Answers" is any HTTP answer but "not here" (404,
 * 410) and "not now" (502, 503, 504): an endpoint asked without a sign-in's parameters refuses, and
 * that refusal shows it is there. The key set must be one (JSON with `keys`).
 *
 * The requests go only where the connector's own addresses may (https, or http on a loopback host:
 * `idpEndpoint`, which the discovered endpoints must pass too) and follow no redirects; each waits
 * 5 s at most, and they run together.
 */

const probeTimeoutMs = 5000;

type Target = { field: string; what: string; url: string; method: 'get' | 'post'; keySet?: boolean };

/** Why there was no answer, in words (the error codes of Node's network stack, translated). */
function whyUnreachable(error: unknown): string {
  if (error instanceof TimeoutError) {
    return `no answer within ${probeTimeoutMs / 1000} s`;
  }
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'its host name does not resolve';
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ECONNRESET':
      return 'the connection was reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'its host cannot be reached';
    default:
      return typeof code === 'string' && /CERT|TLS|SSL/.test(code)
        ? `its TLS certificate was not accepted (${code})`
        : `the request failed (${typeof code === 'string' ? code : 'no answer'})`;
  }
}

/** What is wrong with one target's answer, if anything. */
function whatIsWrong(target: Target, response: Response<string>): string | undefined {
  const status = response.statusCode;
  if ([404, 410].includes(status)) {
    return `answered ${status}: nothing is there`;
  }
  if ([502, 503, 504].includes(status)) {
    return `answered ${status}: the server is not available`;
  }
  if (target.keySet) {
    const keys = status === 200 ? keysOf(response.body) : undefined;
    if (!keys?.length) {
      return status === 200 ? 'did not answer with a JSON Web Key Set' : `answered ${status}, not its keys`;
    }
  }
  return undefined;
}

function keysOf(body: string): unknown[] | undefined {
  try {
    const parsed = JSON.parse(body) as { keys?: unknown };
    return Array.isArray(parsed.keys) ? parsed.keys : undefined;
  } catch {
    return undefined;
  }
}

const request = (url: string, method: 'get' | 'post') =>
  got(url, {
    method,
    // The token endpoint is asked without a code: it refuses, and so shows it is there.
    ...(method === 'post' && { form: { grant_type: 'authorization_code' } }),
    timeout: { request: probeTimeoutMs },
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
  });

/** A sentence saying how the target failed to answer as it should, if it did. */
async function probe(target: Target): Promise<string | undefined> {
  let response: Response<string>;
  try {
    response = await request(target.url, target.method);
  } catch (error) {
    return `the ${target.what} (${target.url}) gave no answer: ${whyUnreachable(error)}`;
  }
  const wrong = whatIsWrong(target, response);
  return wrong && `the ${target.what} (${target.url}) ${wrong}`;
}

const refused = (field: string, sentence: string): RequestError =>
  new RequestError(
    'connector.invalid_config',
    { reason: `The identity provider could not be reached: ${sentence}.` },
    { details: [{ in: 'body', path: `config.${field}`, message: sentence }] },
  );

/** The endpoints an issuer's discovery document names; throws (400) if it cannot be read or does not match. */
async function discover(issuer: string): Promise<Target[]> {
  const base = issuer.endsWith('/') ? issuer : `${issuer}/`;
  const url = new URL('.well-known/openid-configuration', base).href;
  const what = `issuer's discovery document (${url})`;
  let response: Response<string>;
  try {
    response = await request(url, 'get');
  } catch (error) {
    throw refused('issuer', `the ${what} gave no answer: ${whyUnreachable(error)}`);
  }
  if (response.statusCode !== 200) {
    throw refused('issuer', `the ${what} answered ${response.statusCode}`);
  }
  let metadata: Record<string, unknown>;
  try {
    metadata = JSON.parse(response.body) as Record<string, unknown>;
  } catch {
    throw refused('issuer', `the ${what} is not JSON`);
  }
  // Sign-in checks ID tokens against the document's issuer: one that differs would fail every time.
  if (metadata.issuer !== issuer) {
    throw refused('issuer', `the ${what} names another issuer (${String(metadata.issuer)})`);
  }
  const named: Target[] = [
    { field: 'issuer', what: 'authorization endpoint', url: String(metadata.authorization_endpoint), method: 'get' },
    { field: 'issuer', what: 'token endpoint', url: String(metadata.token_endpoint), method: 'post' },
    { field: 'issuer', what: 'key set', url: String(metadata.jwks_uri), method: 'get', keySet: true },
  ];
  for (const target of named) {
    // The document's addresses are held to the connector's own rule: https, or http on a loopback host.
    if (!idpEndpoint.safeParse(target.url).success) {
      throw refused('issuer', `the ${what} names a ${target.what} that is not an https address (${target.url})`);
    }
  }
  return named;
}

/** The endpoints a connector configures itself, with the config field that names each. */
function configuredTargets(settings: IdpSettings, jwksField: string): Target[] {
  const targets: Target[] = [];
  const add = (field: string, what: string, url: string | undefined, method: 'get' | 'post', keySet = false) => {
    if (url) {
      targets.push({ field, what, url, method, keySet });
    }
  };
  add('authorizationEndpoint', 'authorization endpoint', settings.authorizationEndpoint, 'get');
  add('tokenEndpoint', 'token endpoint', settings.tokenEndpoint, 'post');
  add('userInfoEndpoint', 'userinfo endpoint', settings.userInfoEndpoint, 'get');
  if (settings.kind === 'oidc') {
    add(jwksField, 'key set', settings.jwksUri, 'get', true);
  }
  return targets;
}

/**
 * Refuses (400 `connector.invalid_config`, naming what failed in the message and in `details`) a
 * connector whose identity provider does not answer. `jwksField` is where the config names its keys.
 */
export async function assertIdpReachable(settings: IdpSettings, jwksField: string): Promise<void> {
  const targets =
    settings.kind === 'oidc' && !settings.authorizationEndpoint
      ? await discover(settings.issuer ?? '')
      : configuredTargets(settings, jwksField);
  const failures = await Promise.all(
    targets.map(async (target) => {
      const sentence = await probe(target);
      return sentence === undefined ? undefined : { field: target.field, sentence };
    }),
  );
  const failed = failures.filter((failure) => failure !== undefined);
  if (failed.length > 0) {
    throw new RequestError(
      'connector.invalid_config',
      { reason: `The identity provider could not be reached: ${failed.map(({ sentence }) => sentence).join('; ')}.` },
      { details: failed.map(({ field, sentence }) => ({ in: 'body', path: `config.${field}`, message: sentence })) },
    );
  }
}
