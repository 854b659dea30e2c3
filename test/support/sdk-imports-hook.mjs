// A module resolve hook (node:module register) for a service process under test: it writes
// `loaded <specifier>` on stderr for each OpenTelemetry SDK or exporter module imported.
export async function resolve(specifier, context, next) {
  if (/^@opentelemetry\/(sdk|exporter)/.test(specifier)) {
    process.stderr.write(`loaded ${specifier}\n`);
  }
  return next(specifier, context);
}
