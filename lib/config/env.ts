import { availableParallelism } from 'node:os';
import { z } from 'zod';

import { type SettingName, settings } from '../../config/defaults.ts';
import { isLoopback } from './loopback.ts';

/** 32 bytes in base64 (standard or URL-safe alphabet), as `openssl rand -base64 32` prints them. */
const encryptionKey = z
  .string()
  .trim()
  .regex(/^[\w+/-]{43}=?$/, 'must be 32 bytes in base64 (openssl rand -base64 32)')
  .transform((value) => Buffer.from(value, 'base64'));

const url = z.url({ protocol: /^https?$/ }).transform((value) => value.replace(/\/+$/, ''));

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535),
  WORKERS: z.coerce.number().int().min(1).max(256).optional(),
  ENDPOINT: url.optional(),
  DB_URL: z
    .string()
    .regex(
      /^(sqlite:.+|(mysql|postgres|postgresql):\/\/.+)$/,
      'must be sqlite:<path>, mysql://user:pass@host:port/db or postgres://user:pass@host:port/db',
    ),
  DB_CONNECT_TIMEOUT: z.coerce.number().int().min(0).max(3600),
  BOOTSTRAP_ADMIN_CLIENT_ID: z
    .string()
    .regex(/^[\w-]{1,64}$/, 'must be 1 to 64 letters, digits, - or _')
    .optional(),
  BOOTSTRAP_ADMIN_CLIENT_SECRET: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  MANAGEMENT_API_RESOURCE: url.optional(),
  HOOKS_RETRY_SCHEDULE: z.string().regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'must be a comma-separated list of seconds'),
  HOOKS_SIGNATURE_OVERLAP: z.coerce.number().int().min(0).max(2_592_000),
  HOOKS_EVENT_RETENTION: z.coerce.number().int().min(60).max(31_536_000),
  HOOKS_ALLOW_PRIVATE_TARGETS: z.enum(['true', 'false']).optional(),
  HOOKS_DISABLE_AFTER: z.coerce
    .number()
    .int()
    .min(1)
    .max(365 * 86_400),
  HOOKS_CONCURRENCY_PER_HOOK: z.coerce.number().int().min(1).max(1000),
  NODE_ENV: z.enum(['development', 'production', 'test']),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  TRUST_PROXY: z.enum(['true', 'false']),
  HTTP_REQUEST_TIMEOUT: z.coerce.number().int().min(1).max(3600),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  SMTP_FROM: z.string().min(3).max(256),
  PWNED_PASSWORDS_URL: url,
  CAPTCHA_VERIFY_URL_TURNSTILE: url,
  CAPTCHA_VERIFY_URL_RECAPTCHA: url,
  SECRETS_ENCRYPTION_KEY: encryptionKey.optional(),
  SECRETS_ENCRYPTION_OLD_KEYS: z
    .string()
    .transform((value) => value.split(',').filter((key) => key.trim() !== ''))
    .pipe(z.array(encryptionKey))
    .optional(),
  CLIENT_AUTH_FAILURE_WINDOW: z.coerce.number().int().min(1).max(86_400),
  CLIENT_AUTH_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).max(1_000_000),
  CLIENT_AUTH_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000),
  TOKEN_EXCHANGE_MAX_ACT_DEPTH: z.coerce.number().int().min(1).max(100),
  CLIENT_ID_METADATA_DOCUMENTS: z.enum(['true', 'false']),
  CLIENT_ID_METADATA_DOCUMENT_HOSTS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((host) => host.trim().toLowerCase())
        .filter((host) => host !== ''),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^(\*|(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*)$/,
            'must be host names, *.suffix patterns or * (comma-separated)',
          ),
      ),
    )
    .optional(),
  // A bearer token (RFC 6750's characters), long enough not to be guessed.
  METRICS_TOKEN: z
    .string()
    .regex(/^[\w.~+/-]{16,256}=*$/, 'must be 16 to 256 letters, digits or -._~+/ (openssl rand -hex 32)')
    .optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'console', 'none']).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json'], {
    error: "must be http/protobuf or http/json (gRPC is not offered: use the collector's HTTP port, 4318)",
  }),
} satisfies Record<SettingName, z.ZodType>);

export type Config = {
  port: number;
  /** Processes serving the port: above 1, a cluster primary and this many workers (lib/workers.ts). */
  workers: number;
  endpoint: string;
  issuer: string;
  dbUrl: string;
  /** How long start-up waits for an unreachable database, in seconds. */
  dbConnectTimeout: number;
  bootstrapAdmin?: { clientId: string; clientSecret: string };
  managementApiResource: string;
  hooksRetrySchedule: number[];
  hooksAllowPrivateTargets: boolean;
  /** Seconds a rotated signing key goes on signing beside the new one. */
  hooksSignatureOverlapSeconds: number;
  /** Seconds of only failed attempts after which a hook is disabled. */
  hooksDisableAfter: number;
  /** Requests in flight to one hook, across every dispatcher on the database. */
  hooksConcurrencyPerHook: number;
  /** How long the webhook event log keeps an event (replay reaches this far back), in milliseconds. */
  hooksEventRetentionMs: number;
  production: boolean;
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: string;
  trustProxy: boolean;
  /** Milliseconds within which a request's headers and body must arrive (Node's requestTimeout). */
  requestTimeoutMs: number;
  /** Absent: verification emails go to the development message store. */
  smtp?: { url: string; from: string };
  /** Base URL of the breached-password range API (the policy's `rejects.pwned`). */
  pwnedPasswordsUrl: string;
  /** Where captcha tokens are checked: Turnstile's siteverify, the reCAPTCHA Enterprise API's base. */
  captchaVerifyUrls: { turnstile: string; recaptchaEnterprise: string };
  /** Secrets at rest: sealed with `current` (unset: plaintext); `old` still open what they sealed. */
  secretKeys: { current?: Buffer; old: Buffer[] };
  /** Failed client authentications allowed per window (seconds), per client id and per source address. */
  clientAuthThrottle: { windowSeconds: number; failuresPerClient: number; failuresPerAddress: number };
  /** Token exchange: how many nested `act` claims (actors) an issued token may carry. */
  tokenExchange: { maxActDepth: number };
  /** Client ID Metadata Documents: off, or on for client ids on these hosts (`*.suffix` and `*` patterns). */
  clientIdMetadataDocuments: { enabled: boolean; hosts: string[] };
  /** GET /metrics: open (development), behind this bearer token, or off (production without a token). */
  metrics: { enabled: boolean; token?: string };
  /** Variables set that look like one of ours but are not (a typo): named in a start warning. */
  unknownVariables: Array<{ name: string; suggestion?: SettingName }>;
  /** OpenTelemetry traces; absent, no tracing code is loaded. The SDK reads the other OTEL_* variables itself. */
  tracing?: { exporter: 'otlp' | 'console'; protocol: 'http/protobuf' | 'http/json'; endpoint?: string };
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The settings that have a value of their own when unset (config/defaults.ts). */
const defaultValues: Record<string, string> = Object.fromEntries(
  Object.entries(settings).flatMap(([name, setting]) => ('default' in setting ? [[name, setting.default]] : [])),
);

/** Parses the environment once; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = schema.safeParse({ ...defaultValues, ...present });
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const values = result.data;
  const documentHosts = values.CLIENT_ID_METADATA_DOCUMENT_HOSTS ?? [];
  if (values.CLIENT_ID_METADATA_DOCUMENTS === 'true' && documentHosts.length === 0) {
    throw new ConfigError(
      'invalid configuration: CLIENT_ID_METADATA_DOCUMENTS=true needs CLIENT_ID_METADATA_DOCUMENT_HOSTS (the hosts whose URLs may be client ids, or *)',
    );
  }
  if (Boolean(values.BOOTSTRAP_ADMIN_CLIENT_ID) !== Boolean(values.BOOTSTRAP_ADMIN_CLIENT_SECRET)) {
    throw new ConfigError(
      'invalid configuration: BOOTSTRAP_ADMIN_CLIENT_ID and BOOTSTRAP_ADMIN_CLIENT_SECRET must be set together',
    );
  }
  const endpoint = values.ENDPOINT ?? `http://localhost:${values.PORT}`;
  const production = values.NODE_ENV === 'production';
  return {
    port: values.PORT,
    // One process where a debugger or a test reads the logs; every core in production, on SQLite too
    // (several writers on one file hold: docs/decisions.md, "Worker processes").
    workers: values.WORKERS ?? (production ? availableParallelism() : 1),
    endpoint,
    issuer: `${endpoint}/oidc`,
    dbUrl: values.DB_URL,
    dbConnectTimeout: values.DB_CONNECT_TIMEOUT,
    bootstrapAdmin:
      values.BOOTSTRAP_ADMIN_CLIENT_ID && values.BOOTSTRAP_ADMIN_CLIENT_SECRET
        ? { clientId: values.BOOTSTRAP_ADMIN_CLIENT_ID, clientSecret: values.BOOTSTRAP_ADMIN_CLIENT_SECRET }
        : undefined,
    managementApiResource: values.MANAGEMENT_API_RESOURCE ?? `${endpoint}/api`,
    hooksRetrySchedule: values.HOOKS_RETRY_SCHEDULE.split(',').map(Number),
    hooksAllowPrivateTargets: values.HOOKS_ALLOW_PRIVATE_TARGETS
      ? values.HOOKS_ALLOW_PRIVATE_TARGETS === 'true'
      : !production,
    hooksSignatureOverlapSeconds: values.HOOKS_SIGNATURE_OVERLAP,
    hooksDisableAfter: values.HOOKS_DISABLE_AFTER,
    hooksConcurrencyPerHook: values.HOOKS_CONCURRENCY_PER_HOOK,
    hooksEventRetentionMs: values.HOOKS_EVENT_RETENTION * 1000,
    production,
    nodeEnv: values.NODE_ENV,
    logLevel: values.LOG_LEVEL,
    trustProxy: values.TRUST_PROXY === 'true',
    requestTimeoutMs: values.HTTP_REQUEST_TIMEOUT * 1000,
    smtp: values.SMTP_URL ? { url: values.SMTP_URL, from: values.SMTP_FROM } : undefined,
    pwnedPasswordsUrl: values.PWNED_PASSWORDS_URL,
    captchaVerifyUrls: {
      turnstile: values.CAPTCHA_VERIFY_URL_TURNSTILE,
      recaptchaEnterprise: values.CAPTCHA_VERIFY_URL_RECAPTCHA,
    },
    secretKeys: { current: values.SECRETS_ENCRYPTION_KEY, old: values.SECRETS_ENCRYPTION_OLD_KEYS ?? [] },
    clientAuthThrottle: {
      windowSeconds: values.CLIENT_AUTH_FAILURE_WINDOW,
      failuresPerClient: values.CLIENT_AUTH_FAILURES_PER_CLIENT,
      failuresPerAddress: values.CLIENT_AUTH_FAILURES_PER_ADDRESS,
    },
    tokenExchange: { maxActDepth: values.TOKEN_EXCHANGE_MAX_ACT_DEPTH },
    clientIdMetadataDocuments: { enabled: values.CLIENT_ID_METADATA_DOCUMENTS === 'true', hosts: documentHosts },
    metrics: { enabled: Boolean(values.METRICS_TOKEN) || !production, token: values.METRICS_TOKEN },
    tracing: tracingOf(values),
    unknownVariables: unknownVariablesOf(Object.keys(present)),
  };
}

/** Prefixes of our settings' names; any other variable with one is a setting we do not have. */
const ourPrefixes = [
  'DB_',
  'HOOKS_',
  'HTTP_',
  'SMTP_',
  'CLIENT_',
  'SECRETS_',
  'TOKEN_',
  'BOOTSTRAP_',
  'METRICS_',
  'MANAGEMENT_',
  'CAPTCHA_',
];

/** Edit distance with transpositions (Damerau–Levenshtein, optimal string alignment). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) {
    d[0][j] = j;
  }
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/**
 * Variables that are not settings but look like one: one edit from a setting's name (two for names
 * longer than five letters: PROT, DB_ULR, HOOKS_RETRY_SHCEDULE), or with one of our prefixes. PATH,
 * HOME and the like are two edits from any short setting and stay quiet.
 */
function unknownVariablesOf(names: string[]): Config['unknownVariables'] {
  const known = Object.keys(settings) as SettingName[];
  return names
    .filter((name) => /^[A-Z][A-Z0-9_]*$/.test(name) && !known.includes(name as SettingName))
    .flatMap((name) => {
      const suggestion = known.find((setting) => distance(name, setting) <= (setting.length > 5 ? 2 : 1));
      if (suggestion) {
        return [{ name, suggestion }];
      }
      return ourPrefixes.some((prefix) => name.startsWith(prefix)) ? [{ name }] : [];
    });
}

/** Traces go out when an exporter is named, or when a collector is given (OTLP, the standard's default). */
function tracingOf(values: z.output<typeof schema>): Config['tracing'] {
  const exporter = values.OTEL_TRACES_EXPORTER ?? (values.OTEL_EXPORTER_OTLP_ENDPOINT ? 'otlp' : 'none');
  return exporter === 'none'
    ? undefined
    : { exporter, protocol: values.OTEL_EXPORTER_OTLP_PROTOCOL, endpoint: values.OTEL_EXPORTER_OTLP_ENDPOINT };
}

/**
 * What a start logs as warnings (one line each, naming the variable): variables that look like ours
 * but are not, and in production settings that work but leave users exposed.
 */
export function configWarnings(config: Config): Array<{ setting: string; message: string }> {
  const warnings: Array<{ setting: string; message: string }> = config.unknownVariables.map(({ name, suggestion }) => ({
    setting: name,
    message: suggestion
      ? `${name} is not a setting of this service: did you mean ${suggestion}?`
      : `${name} is not a setting of this service (see the configuration table in README.md)`,
  }));
  if (!config.production) {
    return warnings;
  }
  const endpoint = new URL(config.endpoint);
  if (endpoint.protocol === 'http:' && !isLoopback(endpoint.hostname)) {
    warnings.push({
      setting: 'ENDPOINT',
      message: `ENDPOINT ${config.endpoint} is plain http: passwords, cookies and tokens cross the network unencrypted; serve it over https`,
    });
  }
  if (!config.smtp) {
    warnings.push({
      setting: 'SMTP_URL',
      message:
        'SMTP_URL is not set: verification codes cannot be sent (the development message store is off in production), so sign-in, registration and password reset by code answer 501 connector.not_found',
    });
  }
  if (!config.secretKeys.current) {
    warnings.push({
      setting: 'SECRETS_ENCRYPTION_KEY',
      message:
        'SECRETS_ENCRYPTION_KEY is not set: signing keys and other secrets are stored in plaintext, so a copy of the database can sign tokens',
    });
  }
  return warnings;
}
