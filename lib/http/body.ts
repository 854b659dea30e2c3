import { koaBody } from 'koa-body';

import { RequestError } from './errors.ts';

/** JSON request bodies up to 1 MB; anything unparsable is the client's error, never a 500. */
export const jsonBody = koaBody({
  jsonLimit: '1mb',
  text: false,
  urlencoded: false,
  multipart: false,
  onError(error) {
    const tooLarge = (error as { status?: number }).status === 413;
    throw new RequestError(
      { code: tooLarge ? 'request.entity_too_large' : 'guard.invalid_input', status: tooLarge ? 413 : 400 },
      tooLarge ? 'The request body is larger than 1 MB.' : 'The request body is not valid JSON.',
    );
  },
});
