import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import type { Logger } from './logger.ts';

/** What Node answers itself, before any route (a malformed request, headers over its 16 KB), by parser error code. */
const clientErrors: Record<string, { status: number; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'request.header_fields_too_large', message: 'The request headers are larger than 16 KB.' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: 'request.entity_too_large', message: 'The chunk extensions are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request.timeout', message: 'The request took too long to arrive.' },
};
const malformed = { status: 400, code: 'request.malformed', message: 'The request is not valid HTTP.' };

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
