/** What a span says about its work: ids, names, counts (never a secret, a token or a body). */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** `work` may add attributes as it learns them (a status code). */
type Runner = <T>(
  name: string,
  attributes: SpanAttributes,
  work: (note: (attributes: SpanAttributes) => void) => Promise<T>,
) => Promise<T>;

const untraced: Runner = (_name, _attributes, work) => work(() => undefined);
let runner: Runner = untraced;

/**
 * Runs `work` in a span of its own when tracing is on (`lib/tracing/sdk.ts`, loaded only then);
 * otherwise just runs it. For work outside a request's own span: a webhook delivery, a call to
 * another identity provider.
 */
export const inSpan: Runner = (name, attributes, work) => runner(name, attributes, work);

/** Set when tracing starts; `undefined` when it stops. */
export function traceSpansWith(next: Runner | undefined): void {
  runner = next ?? untraced;
}
