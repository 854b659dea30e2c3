import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

import { RequestError } from './errors.ts';
import type { Logger } from './logger.ts';

/** What Node answers itself, before any route (a malformed request, headers over its 16 KB), by parser error code. */
const clientErrors: Record<string, RequestError> = {
  HPE_HEADER_OVERFLOW: new RequestError('request.header_fields_too_large'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: new RequestError('request.entity_too_large', {
    reason: 'The chunk extensions are too large.',
  }),
  ERR_HTTP_REQUEST_TIMEOUT: new RequestError('request.timeout'),
};
const malformed = new RequestError('request.malformed');

/**
 * The server's `clientError` listener. Node's own answer to a request it could not parse is an empty
 * 400 or 431; ours is a JSON error like every other. The request is logged by its parse error (code
 * and message), never by the `rawPacket` the error carries: the request's bytes may hold a bearer
 * token or a password.
 */
export function answerMalformedRequest(logger: Logger) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    const response = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    logger.info({ err: error }, 'malformed HTTP request');
    const { status, code, message } = clientErrors[error.code ?? ''] ?? malformed;
    const body = JSON.stringify({ code, message });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
