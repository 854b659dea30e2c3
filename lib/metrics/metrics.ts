import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics, counted where things happen and read by `GET /metrics`
 * (`lib/metrics/endpoint.ts`). Counting is an increment or an observation on a label set of a few
 * fixed strings: a token request pays about a microsecond for it. Values that need the database
 * (the webhook outbox, the pool) are read when /metrics is scraped, never per request.
 */
export const registry = new Registry();

const seconds = (name: string, help: string, labelNames: string[], buckets: number[]) =>
  new Histogram({ name, help, labelNames, buckets, registers: [registry] });

export const httpRequests = seconds(
  'identity_http_request_duration_seconds',
  'HTTP requests by method, route pattern (never the raw path) and status, and how long they took',
  ['method', 'route', 'status'],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);

export const tokenRequests = new Counter({
  name: 'identity_token_requests_total',
  help: 'Token endpoint requests by grant type and result: success, or the OAuth error code (token exchange: grant_type="urn:ietf:params:oauth:grant-type:token-exchange")',
  labelNames: ['grant_type', 'result'],
  registers: [registry],
});

export const signIns = new Counter({
  name: 'identity_sign_ins_total',
  help: 'End users signed in through the sign-in experience, by interaction event (SignIn, Register)',
  labelNames: ['event'],
  registers: [registry],
});

export const verificationFailures = new Counter({
  name: 'identity_verification_failures_total',
  help: 'Wrong passwords and codes given by end users (each counts toward a lockout)',
  registers: [registry],
});

export const lockouts = new Counter({
  name: 'identity_lockouts_total',
  help: 'Identifiers locked after too many failed verifications in a row',
  registers: [registry],
});

export const connectorFailures = new Counter({
  name: 'identity_connector_failures_total',
  help: 'Sign-ins at a social or SSO identity provider that failed, by stage: configuration, discovery, callback (cancelled, refused or not matching), token, userinfo',
  labelNames: ['stage'],
  registers: [registry],
});

export const webhookAttempts = seconds(
  'identity_webhook_attempt_duration_seconds',
  'Webhook delivery attempts by result (succeeded; retry: failed, tried again later; failed: given up) and how long they took',
  ['result'],
  [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);

export const webhookDeliveryAttempts = new Counter({
  name: 'identity_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by hook id and outcome (succeeded; retry: failed, tried again later; failed: given up)',
  labelNames: ['hook_id', 'outcome'],
  registers: [registry],
});

export const webhookDeliveryLatency = seconds(
  'identity_webhook_delivery_latency_seconds',
  'From the commit of an event to the 2xx answer of its receiver, retries (and recoveries) included',
  [],
  [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600, 86_400],
);

let collectingProcessMetrics = false;

/** CPU, memory, event loop lag, garbage collection (prom-client's defaults), once per process. */
export function collectProcessMetrics(): void {
  if (!collectingProcessMetrics) {
    collectingProcessMetrics = true;
    collectDefaultMetrics({ register: registry });
  }
}
