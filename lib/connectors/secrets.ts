/**
 * Client secrets are write-only: responses show a mask that ends like the secret, and a mask sent
 * back (a form saved unchanged) keeps the stored secret.
 */
const marker = '••••••••';

export const maskSecret = (secret: string): string => (secret.length >= 16 ? `${marker}${secret.slice(-4)}` : marker);

/** A value that is a mask given back (a form saved unchanged), not a new secret. */
export const isMaskedSecret = (value: string): boolean => value.startsWith(marker);

export function withMaskedSecret<T extends { clientSecret?: unknown }>(config: T): T {
  return typeof config.clientSecret === 'string'
    ? { ...config, clientSecret: maskSecret(config.clientSecret) }
    : config;
}

/** A PATCHed config: omitted keys keep their value, and so does a secret given back as its mask. */
export function mergeConfig(stored: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...stored, ...patch };
  if (typeof patch.clientSecret === 'string' && isMaskedSecret(patch.clientSecret)) {
    merged.clientSecret = stored.clientSecret;
  }
  return merged;
}
