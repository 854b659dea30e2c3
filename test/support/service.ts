import { Agent, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import { createManagementApi } from '@logto/api/management';
import { type Got, got } from 'got';

import { createService, type Service } from '../../lib/app.ts';
import { type Config, loadConfig } from '../../lib/config/env.ts';
import { createLogger } from '../../lib/http/logger.ts';
import { freshDatabaseUrl } from './database.ts';

export const adminClient = { id: 'test-admin', secret: 'test-admin-secret-0123456789' };

/** The official Logto management client (`@logto/api`), signed in as the admin client, against `service`. */
export const logtoManagementClient = (service: ServiceClient) =>
  createManagementApi('default', {
    clientId: adminClient.id,
    clientSecret: adminClient.secret,
    baseUrl: service.url,
    apiIndicator: service.config.managementApiResource,
  }).apiClient;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Parsed JSON whose shape the tests assert at run time rather than declare as a type. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one place tests take JSON untyped (see eslint.config.js)
export type Json = any;

/** What a test sees of a response; bodies are parsed JSON. */
export type HttpResponse<T = Json> = { statusCode: number; headers: IncomingHttpHeaders; body: T };
type RequestOptions = {
  json?: unknown;
  body?: string;
  searchParams?: Record<string, string | number | boolean> | URLSearchParams | string;
  headers?: Record<string, string>;
  form?: Record<string, string>;
  followRedirect?: boolean;
  prefixUrl?: string;
  responseType?: 'json' | 'text';
};
type Call = <T = Json>(url: string, options?: RequestOptions) => Promise<HttpResponse<T>>;
export type HttpClient = { get: Call; post: Call; put: Call; patch: Call; delete: Call; got: Got };

function client(instance: Got): HttpClient {
  const call =
    (method: 'get' | 'post' | 'put' | 'patch' | 'delete'): Call =>
    async <T>(url: string, options: RequestOptions = {}) => {
      const response = await instance(url, { method, ...options } as never);
      return response as unknown as HttpResponse<T>;
    };
  return {
    get: call('get'),
    post: call('post'),
    put: call('put'),
    patch: call('patch'),
    delete: call('delete'),
    got: instance,
  };
}

/** What tests reach a running service by: its address, its configuration and HTTP clients. */
export type ServiceClient = {
  url: string;
  config: Config;
  /** Plain HTTP against the service: never throws on a status, parses JSON. */
  http: HttpClient;
  /** HTTP to /api with a management token. */
  api: HttpClient;
  token(clientId: string, secret: string, form: Record<string, string>): Promise<TokenResponse>;
  /** Drops the cached management token (after a key it was signed with is deleted). */
  forgetToken(): void;
  stop(): Promise<void>;
};

/** The service running in the test's own process (from the sources). */
export type TestService = ServiceClient & {
  service: Service;
  /** What the service logged so far (with `logs: true`: every level, JSON lines; `'development'`: info, as read). */
  logs(): string;
  /** What the service printed once for the operator (stderr in real use): generated credentials, the setup token. */
  notices(): string;
};

export type TokenResponse = {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
};

/** A stream that keeps what is written to it. */
function captured(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

/**
 * Starts the real service on a free port over a database of its own (or `dbUrl` to share one, as
 * several instances or a restart do). Logs are silent unless TEST_LOG_LEVEL is set, or `logs` asks
 * to keep them (at every level) for the test to read, or `'development'` as a developer reads them.
 */
export async function startService(
  options: { dbUrl?: string; port?: number; env?: Record<string, string>; logs?: boolean | 'development' } = {},
): Promise<TestService> {
  const dbUrl = options.dbUrl ?? (await freshDatabaseUrl());
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freePort());
    const config = loadConfig({
      PORT: String(port),
      ENDPOINT: `http://127.0.0.1:${port}`,
      DB_URL: dbUrl,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      BOOTSTRAP_ADMIN_CLIENT_ID: adminClient.id,
      BOOTSTRAP_ADMIN_CLIENT_SECRET: adminClient.secret,
      ...options.env,
    });
    const logs = captured();
    const notices = captured();
    const logger =
      options.logs === 'development'
        ? createLogger({ production: false, logLevel: 'info' }, logs.stream)
        : options.logs
          ? createLogger({ production: true, logLevel: 'trace' }, logs.stream)
          : createLogger({ production: true, logLevel: config.logLevel });
    const service = await createService(config, logger, notices.stream);
    try {
      await service.listen(port);
    } catch (error) {
      await service.close();
      // The port was free when chosen; between then and now (a start takes a second or more) another
      // test process, or an outgoing connection's ephemeral port, may have taken it: choose again.
      if ((error as { code?: string }).code === 'EADDRINUSE' && options.port === undefined && attempt < 5) {
        continue;
      }
      throw error;
    }
    // Where the test reaches it; the public ENDPOINT (issuer) may be another name.
    const client = serviceClient(`http://127.0.0.1:${port}`, config, () => service.close());
    return { ...client, service, logs: logs.text, notices: notices.text };
  }
}

/**
 * HTTP clients of a service at `url` (in this process or another): plain, management API (with a token
 * of the bootstrap admin application, fetched when needed) and the token endpoint.
 */
export function serviceClient(url: string, config: Config, close: () => Promise<void>): ServiceClient {
  // An agent per service: a restarted service on the same port must not get a dead keep-alive socket.
  const agent = new Agent({ keepAlive: true });
  const base = got.extend({
    prefixUrl: url,
    throwHttpErrors: false,
    retry: { limit: 0 },
    responseType: 'json',
    agent: { http: agent },
  });

  const token = async (clientId: string, secret: string, form: Record<string, string>): Promise<TokenResponse> => {
    const response = await base.post('oidc/token', {
      form,
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
    });
    return {
      statusCode: response.statusCode,
      headers: response.headers,
      body: response.body as unknown as Record<string, unknown>,
    };
  };

  let managementToken: { value: string; expiresAt: number } | undefined;
  const api = base.extend({
    prefixUrl: `${url}/api`,
    hooks: {
      beforeRequest: [
        async (request) => {
          if (request.headers.authorization !== undefined) {
            return;
          }
          if (!managementToken || managementToken.expiresAt < Date.now() + 60_000) {
            const { body } = await token(adminClient.id, adminClient.secret, {
              grant_type: 'client_credentials',
              resource: config.managementApiResource,
              scope: 'all',
            });
            managementToken = {
              value: String(body.access_token),
              expiresAt: Date.now() + Number(body.expires_in) * 1000,
            };
          }
          request.headers.authorization = `Bearer ${managementToken.value}`;
        },
      ],
    },
  });

  return {
    url,
    config,
    http: client(base),
    api: client(api),
    token,
    forgetToken: () => (managementToken = undefined),
    async stop() {
      agent.destroy();
      await close();
    },
  };
}
