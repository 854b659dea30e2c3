/**
 * Every setting the service reads from the environment, with its default and meaning: the one source of
 * the defaults. `default` is the value a setting takes when it is unset or empty, read exactly as if it
 * had been set to it; `unset` says what happens instead where the value is derived from other settings.
 * `lib/config/env.ts` parses and range-checks them once at start; the README's table shows the same
 * defaults (a test holds them equal).
 */
type Setting = { default: string; meaning: string } | { unset: string; meaning: string } | { meaning: string };

export const settings = {
  PORT: { default: '3001', meaning: 'HTTP port' },
  WORKERS: {
    unset: '1; the number of cores (`os.availableParallelism()`) when NODE_ENV=production',
    meaning:
      'processes serving the port, 1 to 256: above 1, and always in production, a primary starts one worker, which prepares the database and prints the one-time secrets, then the others; it replaces a worker that dies and stops them all on SIGTERM (docs/operations.md, "Worker processes")',
  },
  ENDPOINT: { unset: 'http://localhost:$PORT', meaning: 'public base URL; the issuer is $ENDPOINT/oidc' },
  DB_URL: {
    default: 'sqlite:./data/identity.sqlite3',
    meaning: 'sqlite:<path> (embedded) or mysql://user:pass@host:port/db (MySQL 8 / MariaDB 10.6+)',
  },
  DB_CONNECT_TIMEOUT: {
    default: '30',
    meaning:
      'seconds start-up (and the CLI) keeps retrying a database it cannot reach (refused, unknown host, timeout) before it stops; wrong credentials stop it at once',
  },
  BOOTSTRAP_ADMIN_CLIENT_ID: {
    meaning:
      'with BOOTSTRAP_ADMIN_CLIENT_SECRET: a MachineToMachine application with these credentials is kept holding the management API scope `all`',
  },
  BOOTSTRAP_ADMIN_CLIENT_SECRET: { meaning: 'see BOOTSTRAP_ADMIN_CLIENT_ID' },
  MANAGEMENT_API_RESOURCE: { unset: '$ENDPOINT/api', meaning: 'resource indicator of the management API' },
  HOOKS_RETRY_SCHEDULE: {
    default: '5,300,1800,7200,18000,36000,50400,72000,86400',
    meaning: 'seconds to wait before each retry of a webhook delivery',
  },
  HOOKS_SIGNATURE_OVERLAP: {
    default: '86400',
    meaning: 'seconds a rotated webhook signing key still signs, beside the new one',
  },
  HOOKS_DISABLE_AFTER: {
    default: '432000',
    meaning: 'seconds of nothing but failed attempts after which a webhook is disabled (5 days)',
  },
  HOOKS_CONCURRENCY_PER_HOOK: {
    default: '32',
    meaning: 'requests in flight to one webhook at most, all instances and workers together',
  },
  HOOKS_EVENT_RETENTION: {
    default: '1209600',
    meaning:
      'seconds the webhook event log keeps each event for replay (14 days); older ones are pruned in the background',
  },
  HOOKS_ALLOW_PRIVATE_TARGETS: {
    unset: 'true (false when NODE_ENV=production)',
    meaning: 'allow webhook URLs on loopback and private addresses',
  },
  HTTP_REQUEST_TIMEOUT: {
    default: '30',
    meaning:
      "seconds, 1 to 3600, within which a request's headers and body must have arrived; a slower one (a trickled body) gets 408 request.timeout and its connection is closed. An idle keep-alive connection is not a request",
  },
  NODE_ENV: { default: 'development', meaning: '`production` turns off development-only endpoints and logs JSON' },
  LOG_LEVEL: { default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
  TRUST_PROXY: {
    default: 'false',
    meaning: 'trust X-Forwarded-* headers (set when running behind a load balancer that terminates TLS)',
  },
  SMTP_URL: {
    meaning:
      'smtp://user:pass@host:587 or smtps://...:465: send verification emails through this server; unset, they are kept in the development message store, and in production not sent (501 connector.not_found; a warning at start)',
  },
  SMTP_FROM: { default: 'Identity <no-reply@localhost>', meaning: 'sender of verification emails' },
  PWNED_PASSWORDS_URL: {
    default: 'https://api.pwnedpasswords.com',
    meaning:
      "Have I Been Pwned's range API (or a mirror of it), asked when the password policy's `rejects.pwned` is on: only the first 5 hex digits of a password's SHA-1 are sent; no answer within 2 s lets the password through with a warning in the log (fail-open)",
  },
  CAPTCHA_VERIFY_URL_TURNSTILE: {
    default: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    meaning:
      "where a Cloudflare Turnstile token is checked (the captcha provider's `siteverify`): a POST of the secret key and the token, 5 s at most; no answer refuses the sign-in (422 session.captcha_failed, fail-closed). Tests point it at a local stand-in",
  },
  CAPTCHA_VERIFY_URL_RECAPTCHA: {
    default: 'https://recaptchaenterprise.googleapis.com/v1',
    meaning:
      'the reCAPTCHA Enterprise API a token is assessed by (`POST <url>/projects/<projectId>/assessments`, the secret key as the `x-goog-api-key` header, not in the URL), 5 s at most; no answer refuses the sign-in (fail-closed)',
  },
  SECRETS_ENCRYPTION_KEY: {
    meaning:
      '32 random bytes, base64 (`openssl rand -base64 32`): signing and cookie keys, client secrets, hook signing keys and TOTP secrets are stored encrypted with it (AES-256-GCM); unset, in plaintext (production logs a warning)',
  },
  SECRETS_ENCRYPTION_OLD_KEYS: {
    meaning:
      'comma-separated earlier values of SECRETS_ENCRYPTION_KEY, still accepted for reading while `npm run cli -- rotate-secrets` re-encrypts with the current one',
  },
  CLIENT_AUTH_FAILURE_WINDOW: {
    default: '300',
    meaning:
      'seconds over which failed client authentications (token, revocation, introspection) and bad management API tokens are counted, and how long a source over its limit has its failures answered 429 (a right secret or valid token is never refused)',
  },
  CLIENT_AUTH_FAILURES_PER_CLIENT: {
    default: '20',
    meaning:
      "failed client authentications per client id from one source address in a window before that source's wrong secrets for it get 429",
  },
  CLIENT_AUTH_FAILURES_PER_ADDRESS: {
    default: '100',
    meaning:
      "failed client authentications per source address (IPv6: per /64), whatever client they name, and bad management API tokens per source address, in a window before that source's failures get 429",
  },
  TOKEN_EXCHANGE_MAX_ACT_DEPTH: {
    default: '5',
    meaning:
      'how many actors a token exchange may chain (nested `act` claims, RFC 8693 §4.1), 1 to 100: an exchange whose token would nest more is refused with 400 invalid_request "actor chain too deep"',
  },
  CLIENT_ID_METADATA_DOCUMENTS: {
    default: 'false',
    meaning:
      '`true`: a `client_id` that is an https URL on a host of CLIENT_ID_METADATA_DOCUMENT_HOSTS names a client described by the JSON document at that URL (draft-ietf-oauth-client-id-metadata-document, as MCP clients use it), fetched through the SSRF guard and kept in memory; such a client is a public third party, always asked for consent',
  },
  CLIENT_ID_METADATA_DOCUMENT_HOSTS: {
    meaning:
      'comma-separated hosts whose URLs may be client ids: `agent.example.com` (that host), `*.example.com` (its subdomains) or `*` (any public host); required when CLIENT_ID_METADATA_DOCUMENTS=true. A client id on another host is refused with invalid_client before anything is fetched, and one with a query string unless its host is named exactly (not by a pattern)',
  },
  METRICS_TOKEN: {
    meaning:
      '16+ letters, digits or -._~+/ (`openssl rand -hex 32`): GET /metrics (Prometheus) answers only with `Authorization: Bearer <token>`; unset, /metrics is open in development and off in production',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    meaning:
      'OpenTelemetry collector (OTLP over HTTP, e.g. http://collector:4318): traces of requests, database queries, webhook deliveries and identity provider calls are sent there; the other standard OTEL_* variables apply (docs/operations.md); unset, and OTEL_TRACES_EXPORTER unset, no tracing code is loaded',
  },
  OTEL_TRACES_EXPORTER: {
    unset: 'otlp when OTEL_EXPORTER_OTLP_ENDPOINT is set',
    meaning: '`otlp`, `console` (spans on stdout, for a look) or `none`',
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    default: 'http/protobuf',
    meaning: "`http/protobuf` or `http/json` (gRPC is not offered: point it at the collector's HTTP port, 4318)",
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof settings;
