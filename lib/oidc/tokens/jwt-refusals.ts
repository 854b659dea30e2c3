import { errors, type KoaContextWithOIDC, type Provider } from 'oidc-provider';

/** How one endpoint answers, in place of the provider's refusal, about a token shaped as a JWT. */
export type JwtAnswer = (ctx: KoaContextWithOIDC) => Promise<void>;

/**
 * oidc-provider looks tokens up in its store, so its revocation and introspection endpoints
 * refuse any JWT with `unsupported_token_type`, once the client has authenticated. Our access
 * tokens for APIs are JWTs: such a refusal is taken over here and answered by the endpoint's own
 * `JwtAnswer` (RFC 7009, RFC 7662). Everything before it (client authentication, a missing
 * `token`) stays the provider's.
 */
export function answerJwtRefusals(
  provider: Provider,
  answers: { revocation: JwtAnswer; introspection: JwtAnswer },
): void {
  const refused = new WeakMap<object, JwtAnswer>();
  const takeOver = (answer: JwtAnswer) => (ctx: KoaContextWithOIDC, error: Error) => {
    if (error instanceof errors.UnsupportedTokenType) {
      refused.set(ctx, answer);
    }
  };
  provider.on('revocation.error', takeOver(answers.revocation));
  provider.on('introspection.error', takeOver(answers.introspection));

  // Every request of the provider passes here: without an async layer of its own until it is a refusal.
  // The answer runs after the provider's error handling, so its failure is answered here as the
  // provider answers its own (a database that cannot tell whether the token is revoked, say).
  provider.use((ctx, next) =>
    next().then(() =>
      refused
        .get(ctx)?.(ctx as KoaContextWithOIDC)
        .catch((error: unknown) => {
          provider.emit('server_error', ctx, error);
          ctx.status = 500;
          ctx.body = { error: 'server_error', error_description: 'oops! something went wrong' };
        }),
    ),
  );
}
