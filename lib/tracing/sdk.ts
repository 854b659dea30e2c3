import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';

import type { Config } from '../config/env.ts';
import { routeLabel } from '../http/route-label.ts';
import { engineOf } from '../storage/database.ts';
import { type SpanAttributes, traceSpansWith } from './spans.ts';

/**
 * OpenTelemetry tracing, imported only when configured (lib/app.ts): a span per HTTP request (named
 * by its route pattern, joined to the caller's trace by `traceparent`), per database query (the SQL
 * with placeholders, never values), per webhook delivery and per call to another identity
 * provider. The SDK reads the other standard variables itself: OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*, OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. Context travels as W3C trace context and baggage.
 */
export type Tracing = { middleware: Middleware; shutdown(): Promise<void> };

type TracingConfig = NonNullable<Config['tracing']>;

function exporterOf({ exporter, protocol, endpoint }: TracingConfig): SpanExporter {
  if (exporter === 'console') {
    return new ConsoleSpanExporter();
  }
  // OTEL_EXPORTER_OTLP_ENDPOINT is the collector's base address; without it the exporter reads
  // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or uses the standard http://localhost:4318/v1/traces.
  const options = endpoint === undefined ? {} : { url: `${endpoint.replace(/\/+$/, '')}/v1/traces` };
  return protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtobufExporter(options);
}

const defined = (attributes: SpanAttributes) =>
  Object.fromEntries(
    Object.entries(attributes).filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined),
  );

/** A failed span says which kind of error, not its message (messages can quote values). */
const failed = (span: Span, error: unknown) =>
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });

export function startTracing(config: TracingConfig, db: Knex): Tracing {
  const provider = new NodeTracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': 'identity-service' }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(exporterOf(config))],
  });
  provider.register();
  const tracer = provider.getTracer('identity-service');

  traceSpansWith(async (name, attributes, work) =>
    tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes: defined(attributes) }, async (span) => {
      try {
        return await work((more) => span.setAttributes(defined(more)));
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    }),
  );

  // OpenTelemetry's names for the three (`db.system`).
  const system = { sqlite: 'sqlite', mysql: 'mysql', postgres: 'postgresql' }[engineOf(db)];
  const queries = new Map<string, Span>();
  type Query = { __knexQueryUid: string; sql: string; method?: string };
  const endQuery = (query: Query, error?: unknown) => {
    const span = queries.get(query.__knexQueryUid);
    queries.delete(query.__knexQueryUid);
    if (span && error !== undefined) {
      failed(span, error);
    }
    span?.end();
  };
  db.on('query', (query: Query) => {
    const operation = query.method ?? 'query';
    queries.set(
      query.__knexQueryUid,
      tracer.startSpan(operation, {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': query.sql },
      }),
    );
  });
  db.on('query-response', (_response: unknown, query: Query) => endQuery(query));
  db.on('query-error', (error: unknown, query: Query) => endQuery(query, error));

  const middleware: Middleware = async (ctx, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
    const span = tracer.startSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol },
      },
      parent,
    );
    let status: number | undefined;
    try {
      await context.with(trace.setSpan(parent, span), next);
    } catch (error) {
      status = 500;
      failed(span, error);
      throw error;
    } finally {
      const route = routeLabel(ctx);
      status ??= ctx.status;
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };

  return {
    middleware,
    async shutdown() {
      traceSpansWith(undefined);
      await provider.shutdown();
    },
  };
}
