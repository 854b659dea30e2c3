import { generate } from 'otplib';

/**
 * The TOTP code an authenticator app shows for `secret`, computed by an implementation of its own
 * (otplib); `steps` moves the clock by whole 30-second steps (a replayed or a next code).
 */
export const totp = (secret: string, steps = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 * steps });
