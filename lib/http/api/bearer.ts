import { RequestError } from '../errors.ts';

/** RFC 6750 §2.1: `Bearer`, exactly one space, one b64token, nothing after (the scheme in any case, RFC 7235). */
const bearer = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token of an `Authorization: Bearer` header, or the 401 that says what is wrong with the header. */
export function bearerToken(header: string): string {
  if (!header) {
    throw new RequestError('auth.authorization_header_missing');
  }
  const token = bearer.exec(header)?.[1];
  if (token) {
    return token;
  }
  if (!/^Bearer(\s|$)/i.test(header)) {
    throw new RequestError('auth.authorization_token_type_not_supported');
  }
  throw new RequestError('auth.unauthorized', {
    reason: 'Unauthorized: the Authorization header must be `Bearer <token>`, one space, one token, nothing after.',
  });
}
