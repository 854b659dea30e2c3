import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { got } from 'got';

import { production } from '../support/build.ts';
import { freshDatabaseUrl, quotedName, testDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { adminClient, freePort } from '../support/service.ts';

type Attribute = { key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean } };
type ExportedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Attribute[];
};
type Export = {
  resourceSpans: Array<{ resource: { attributes: Attribute[] }; scopeSpans: Array<{ spans: ExportedSpan[] }> }>;
};

/** A stand-in OpenTelemetry collector: OTLP over HTTP with JSON bodies, on this machine. */
async function startCollector(): Promise<{ server: Server; url: string; exports: Export[]; contentTypes: string[] }> {
  const exports: Export[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.method === 'POST') {
        contentTypes.push(String(request.headers['content-type']));
        if (String(request.headers['content-type']).startsWith('application/json')) {
          exports.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Export);
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports, contentTypes };
}

/** `--import` this: it registers test/support/sdk-imports-hook.mjs, which reports each OpenTelemetry SDK module imported. */
const sdkImportsShown = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(new URL('../support/sdk-imports-hook.mjs', import.meta.url).href)});`,
)}`;

/** The service as users run it, configured by environment. */
async function startProcess(
  env: Record<string, string>,
  imports: string[] = [],
): Promise<{ child: ChildProcess; url: string; errors: () => string }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...imports.flatMap((module) => ['--import', module]), '--import', 'tsx', 'lib/main.ts'],
    {
      env: {
        ...process.env,
        ...production,
        LOG_LEVEL: 'warn',
        PORT: String(port),
        ENDPOINT: `http://127.0.0.1:${port}`,
        DB_URL: await freshDatabaseUrl(),
        BOOTSTRAP_ADMIN_CLIENT_ID: adminClient.id,
        BOOTSTRAP_ADMIN_CLIENT_SECRET: adminClient.secret,
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) {
        throw new Error(`the service stopped with code ${child.exitCode}: ${errors}`);
      }
      // Refused until the service listens.
      return (await got(`${url}/health/ready`, { retry: { limit: 0 } }).catch(() => undefined))?.statusCode === 200;
    },
    // A minute was not enough once, with three databases' suites beside it on two cores.
    120_000,
    () => `the service ready: ${errors}`,
  );
  return { child, url, errors: () => errors };
}

const attribute = (span: ExportedSpan, key: string) => {
  const value = span.attributes.find((candidate) => candidate.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? value?.boolValue : Number(value.intValue));
};

describe('tracing with OpenTelemetry (OTLP over HTTP to a collector)', function () {
  // A test starts the service as a process and waits up to 120 s for it to be ready.
  this.timeout(200_000);

  it("sends a span per request, named by its route and joined to the caller's trace, with its database queries under it", async () => {
    const collector = await startCollector();
    const service = await startProcess({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'identity-under-test',
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpanId = '00f067aa0ba902b7';
    try {
      const token = await got.post(`${service.url}/oidc/token`, {
        form: { grant_type: 'client_credentials', resource: `${service.url}/api`, scope: 'all' },
        username: adminClient.id,
        password: adminClient.secret,
        headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
        throwHttpErrors: false,
      });
      expect(token.statusCode, token.body).to.equal(200);
    } finally {
      // Shutting down flushes the spans still in the batch.
      service.child.kill('SIGTERM');
      await once(service.child, 'exit');
      collector.server.close();
    }
    expect(service.child.exitCode).to.equal(0);

    const spans = collector.exports.flatMap((batch) =>
      batch.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
    );
    const request = spans.find((span) => span.traceId === traceId && span.parentSpanId === callerSpanId);
    expect(request, JSON.stringify(spans.map((span) => span.name))).to.not.equal(undefined);
    expect(request!.name).to.equal('POST /oidc/token');
    expect(request!.kind).to.equal(2); // SERVER
    expect(attribute(request!, 'http.route')).to.equal('/oidc/token');
    expect(attribute(request!, 'http.response.status_code')).to.equal(200);

    // The application and its roles are read from the database on this first request (then cached).
    const queries = spans.filter(
      (span) =>
        span.parentSpanId === request!.spanId &&
        attribute(span, 'db.system.name') ===
          { sqlite: 'sqlite', mysql: 'mysql', postgres: 'postgresql' }[testDatabase],
    );
    expect(queries.length, JSON.stringify(spans.map((span) => [span.name, span.parentSpanId]))).to.be.greaterThan(0);
    expect(queries.every((query) => query.traceId === traceId)).to.equal(true);
    expect(queries.map((query) => String(attribute(query, 'db.query.text'))).join('\n')).to.match(
      new RegExp(`from ${quotedName('applications')}`),
    );
    for (const query of spans.filter((span) => attribute(span, 'db.query.text') !== undefined)) {
      expect(String(attribute(query, 'db.query.text'))).to.not.include(adminClient.secret);
    }
    const resource = collector.exports[0].resourceSpans[0].resource.attributes;
    expect(resource.find((entry) => entry.key === 'service.name')?.value.stringValue).to.equal('identity-under-test');
  });

  it('loads no OpenTelemetry SDK module when no OTEL_* variable asks for traces', async () => {
    const service = await startProcess({}, [sdkImportsShown]);
    await got(`${service.url}/health/ready`);
    service.child.kill('SIGTERM');
    await once(service.child, 'exit');
    expect(service.errors()).to.not.include('loaded @opentelemetry');
  });

  it('sends protobuf by default (the standard http/protobuf), and the hook does see the SDK then', async () => {
    const collector = await startCollector();
    const service = await startProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }, [sdkImportsShown]);
    try {
      await got(`${service.url}/health/ready`);
    } finally {
      service.child.kill('SIGTERM');
      await once(service.child, 'exit');
      collector.server.close();
    }
    expect(collector.contentTypes.length).to.be.greaterThan(0);
    expect(collector.contentTypes[0]).to.equal('application/x-protobuf');
    expect(service.errors()).to.include('loaded @opentelemetry/sdk-trace-node');
  });
});
