import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { expect } from 'chai';

import { settings } from '../config/defaults.ts';
import { ConfigError, configWarnings, loadConfig } from '../lib/config/env.ts';

describe('configuration', () => {
  it("README's configuration table names every setting with the default config/defaults.ts gives it", () => {
    const rows = new Map<string, string>();
    for (const [, names, value] of readFileSync('README.md', 'utf8').matchAll(
      /^\| (`[A-Z_]+`(?:, `[A-Z_]+`)*) \| ([^|]+) \|/gm,
    )) {
      for (const name of names.matchAll(/`([A-Z_]+)`/g)) {
        rows.set(name[1], value.trim());
      }
    }
    for (const [name, setting] of Object.entries(settings)) {
      expect(rows.has(name), `${name} is missing from the README's table`).to.equal(true);
      const shown = rows.get(name);
      if ('default' in setting) {
        expect(shown, name).to.equal(`\`${setting.default}\``);
      } else if (!('unset' in setting)) {
        expect(shown, name).to.equal('unset');
      }
    }
  });

  it('has working defaults for a fresh clone', () => {
    const config = loadConfig({});
    expect(config).to.include({
      port: 3001,
      endpoint: 'http://localhost:3001',
      issuer: 'http://localhost:3001/oidc',
      dbUrl: 'sqlite:./data/identity.sqlite3',
      dbConnectTimeout: 30,
      managementApiResource: 'http://localhost:3001/api',
      hooksAllowPrivateTargets: true,
      production: false,
    });
    expect(config.hooksRetrySchedule).to.deep.equal([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(config.bootstrapAdmin).to.equal(undefined);
    expect(config.clientAuthThrottle).to.deep.equal({
      windowSeconds: 300,
      failuresPerClient: 20,
      failuresPerAddress: 100,
    });
  });

  it('leaves Client ID Metadata Documents off unless asked, and reads their hosts', () => {
    expect(loadConfig({}).clientIdMetadataDocuments).to.deep.equal({ enabled: false, hosts: [] });
    expect(
      loadConfig({
        CLIENT_ID_METADATA_DOCUMENTS: 'true',
        CLIENT_ID_METADATA_DOCUMENT_HOSTS: ' Agent.example.com, *.agents.example ,',
      }).clientIdMetadataDocuments,
    ).to.deep.equal({ enabled: true, hosts: ['agent.example.com', '*.agents.example'] });
  });

  it('derives the issuer and management resource from ENDPOINT, without a trailing slash', () => {
    const config = loadConfig({ ENDPOINT: 'https://id.example.com/', PORT: '8080' });
    expect(config.issuer).to.equal('https://id.example.com/oidc');
    expect(config.managementApiResource).to.equal('https://id.example.com/api');
  });

  it('opens /metrics in development, closes it in production unless METRICS_TOKEN is set, and traces only when asked', () => {
    expect(loadConfig({}).metrics).to.deep.equal({ enabled: true, token: undefined });
    expect(loadConfig({ NODE_ENV: 'production' }).metrics).to.deep.equal({ enabled: false, token: undefined });
    expect(loadConfig({ NODE_ENV: 'production', METRICS_TOKEN: 'a'.repeat(32) }).metrics).to.deep.equal({
      enabled: true,
      token: 'a'.repeat(32),
    });
    expect(loadConfig({}).tracing).to.equal(undefined);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).to.deep.equal({
      exporter: 'otlp',
      protocol: 'http/protobuf',
      endpoint: 'http://collector:4318/',
    });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracing).to.include({ exporter: 'console' });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing,
    ).to.equal(undefined);
  });

  it('names the setting of each production warning (logged as a field of its line)', () => {
    const warnings = configWarnings(loadConfig({ NODE_ENV: 'production', ENDPOINT: 'http://identity.test' }));
    expect(warnings.map((warning) => warning.setting)).to.deep.equal([
      'ENDPOINT',
      'SMTP_URL',
      'SECRETS_ENCRYPTION_KEY',
    ]);
    expect(warnings[0].message).to.match(/^ENDPOINT http:\/\/identity\.test is plain http/);
  });

  it('turns private webhook targets off in production unless allowed', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).hooksAllowPrivateTargets).to.equal(false);
    expect(
      loadConfig({ NODE_ENV: 'production', HOOKS_ALLOW_PRIVATE_TARGETS: 'true' }).hooksAllowPrivateTargets,
    ).to.equal(true);
  });

  const refused: Array<[string, Record<string, string>, RegExp]> = [
    ['a port out of range', { PORT: '70000' }, /PORT/],
    ['a port that is not a number', { PORT: 'http' }, /PORT/],
    ['an ENDPOINT that is not an http(s) URL', { ENDPOINT: 'ftp://x' }, /ENDPOINT/],
    ['an unknown database scheme', { DB_URL: 'mssql://localhost/db' }, /DB_URL/],
    ['a database wait that is not a number of seconds', { DB_CONNECT_TIMEOUT: '30s' }, /DB_CONNECT_TIMEOUT/],
    ['an unknown NODE_ENV', { NODE_ENV: 'staging' }, /NODE_ENV/],
    ['a retry schedule that is not a list of seconds', { HOOKS_RETRY_SCHEDULE: '5,soon' }, /HOOKS_RETRY_SCHEDULE/],
    ['a bootstrap id without its secret', { BOOTSTRAP_ADMIN_CLIENT_ID: 'admin' }, /BOOTSTRAP_ADMIN_CLIENT_SECRET/],
    ['a client authentication window of zero', { CLIENT_AUTH_FAILURE_WINDOW: '0' }, /CLIENT_AUTH_FAILURE_WINDOW/],
    [
      'a failure limit that is not a number',
      { CLIENT_AUTH_FAILURES_PER_CLIENT: 'many' },
      /CLIENT_AUTH_FAILURES_PER_CLIENT/,
    ],
    [
      'a negative failure limit per address',
      { CLIENT_AUTH_FAILURES_PER_ADDRESS: '-1' },
      /CLIENT_AUTH_FAILURES_PER_ADDRESS/,
    ],
    [
      'Client ID Metadata Documents on without hosts',
      { CLIENT_ID_METADATA_DOCUMENTS: 'true' },
      /CLIENT_ID_METADATA_DOCUMENT_HOSTS/,
    ],
    [
      'a client id host that is not a host name or pattern',
      { CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'https://agent.example.com' },
      /CLIENT_ID_METADATA_DOCUMENT_HOSTS/,
    ],
    [
      'a short bootstrap secret',
      { BOOTSTRAP_ADMIN_CLIENT_ID: 'admin', BOOTSTRAP_ADMIN_CLIENT_SECRET: 'short' },
      /BOOTSTRAP_ADMIN_CLIENT_SECRET/,
    ],
    [
      'a metrics token with characters a bearer token cannot hold',
      { METRICS_TOKEN: 'metrics token with spaces' },
      /METRICS_TOKEN/,
    ],
    [
      'an OTLP endpoint that is not an http(s) URL',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' },
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    ],
    [
      'the gRPC protocol (not offered)',
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json/,
    ],
    ['an unknown traces exporter', { OTEL_TRACES_EXPORTER: 'jaeger' }, /OTEL_TRACES_EXPORTER/],
  ];
  for (const [what, env, names] of refused) {
    it(`stops on ${what}, naming the variable`, () => {
      expect(() => loadConfig(env)).to.throw(ConfigError, names);
    });
  }

  it('runs one process unless in production, where WORKERS defaults to the number of cores; 1 to 256 when set', () => {
    expect(loadConfig({}).workers).to.equal(1);
    expect(loadConfig({ NODE_ENV: 'production' }).workers).to.equal(availableParallelism());
    expect(loadConfig({ NODE_ENV: 'production', DB_URL: 'mysql://u:p@db/identity', WORKERS: '3' }).workers).to.equal(3);
    for (const value of ['0', '257', '1.5', 'auto']) {
      expect(() => loadConfig({ WORKERS: value }), value).to.throw(ConfigError, /^invalid configuration: WORKERS/);
    }
  });
});
