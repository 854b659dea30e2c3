import { z } from 'zod';

import { RequestError } from '../http/errors.ts';

/**
 * Logto's custom UI: sign-in pages an operator uploads (`customUiAssets`), and the sources their
 * scripts may load and call (`customUiCsp`). This service hosts only its own pages, so both stay
 * empty: clearing them is taken, setting them is 400 `request.invalid_input`, the answer Logto gives
 * where the feature is not available (its tests expect one of the two), rather than a setting that
 * is stored and does nothing.
 */
const sources = z.array(z.string().max(256)).max(50);
export const customUiCspSchema = z.strictObject({ scriptSrc: sources.optional(), connectSrc: sources.optional() });
export const customUiAssetsSchema = z.strictObject({ id: z.string().max(64), createdAt: z.number() }).nullable();

export function assertCustomUiNotSet(change: {
  customUiCsp?: z.output<typeof customUiCspSchema>;
  customUiAssets?: z.output<typeof customUiAssetsSchema>;
}): void {
  const hasSources = Boolean(change.customUiCsp?.scriptSrc?.length || change.customUiCsp?.connectSrc?.length);
  if (change.customUiAssets || hasSources) {
    throw new RequestError(
      'request.invalid_input',
      {
        details: 'Custom UI assets and their CSP sources are not available: this service serves its own sign-in pages.',
      },
      { status: 400 },
    );
  }
}
