import { alternatives, sample, type Schema } from '../support/openapi.ts';

/** A small seeded generator (mulberry32): the same seed sends the same requests. */
export function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (max: number) => Math.floor(next() * max);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(items.length)],
    chance: (probability: number) => next() < probability,
  };
}
export type Random = ReturnType<typeof random>;

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const deepMarker = '<<5,000 levels of nesting>>';

export const badStrings = [
  '',
  ' ',
  'x'.repeat(257),
  'x'.repeat(70_000),
  '\u0000',
  'a\u0000b',
  '\u202eevil',
  '\u{1F600}'.repeat(300),
  'e\u0301\u0301\u0301',
  "' OR '1'='1",
  '"; DROP TABLE users; --',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '%00%ff',
  '%',
  '_',
  '\\',
  '${jndi:ldap://fuzz.invalid/a}',
  '{{7*7}}',
  'null',
  'true',
  '-1',
  '1e309',
  'NaN',
  'https://fuzz.invalid/',
  'http://127.0.0.1:1/',
  'javascript:alert(1)',
  'a@b',
  `${'a'.repeat(64)}@example.com`,
  '+123456789012345678901',
  '__proto__',
  'constructor',
  'Bearer x',
];
export const badNumbers = [0, -1, 1, 1.5, -0.0001, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e308, -1e308];
const badValues = (rng: Random): unknown[] => [
  null,
  true,
  false,
  rng.pick(badStrings),
  rng.pick(badNumbers),
  [],
  [null],
  Array.from({ length: 1001 }, () => 'x'),
  {},
  { a: { b: { c: [] } } },
  Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`k${index}`, index])),
  deepMarker,
  JSON.parse(deep(33)) as unknown,
  '\ud800',
];

/** The body as JSON text, with arrays nested 5,000 deep where `mutate` put one (no recursion stringifies that). */
export const bodyText = (value: unknown) => JSON.stringify(value).replaceAll(JSON.stringify(deepMarker), deep(5000));

/** Whole bodies as text, most of them not what the route reads. */
export const badBodies = [
  '',
  '{',
  '}',
  'null',
  '[]',
  '"x"',
  '42',
  '{"a":1,"a":2}',
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  `{"a":${deep(5000)}}`,
  '\ufeff{}',
  '{"a":"\\ud800"}',
  '{"a":1e999999}',
  '{"a":"\\u0000"}',
  `{"a":"${'x'.repeat(1_100_000)}"}`,
];

/** A body as the schema would take it, with the optional fields now and then. */
export function plausible(schema: Schema, rng: Random, depth = 0): unknown {
  const options = alternatives(schema);
  if (options.length > 1 || options[0] !== schema) {
    return plausible(rng.pick(options), rng, depth);
  }
  if (schema.type === 'object' || schema.properties) {
    const entries = Object.entries(schema.properties ?? {}).filter(
      ([key]) => schema.required?.includes(key) || rng.chance(0.5),
    );
    return Object.fromEntries(
      entries.map(([key, property]) => [key, depth > 6 ? sample(property) : plausible(property, rng, depth + 1)]),
    );
  }
  if (schema.type === 'array' && schema.items) {
    return Array.from({ length: Math.min(schema.minItems ?? 0, 10) + rng.int(2) }, () =>
      plausible(schema.items!, rng, depth + 1),
    );
  }
  return sample(schema);
}

/** The body with one value somewhere in it replaced by a bad one (or a key added). */
export function mutate(value: unknown, rng: Random): unknown {
  if (value !== null && typeof value === 'object' && rng.chance(0.75)) {
    const keys = Object.keys(value);
    if (keys.length > 0 && rng.chance(0.8)) {
      const key = rng.pick(keys);
      const copy: Record<string, unknown> = Array.isArray(value)
        ? ([...value] as unknown as Record<string, unknown>)
        : { ...value };
      copy[key] = mutate(copy[key], rng);
      return copy;
    }
    return Array.isArray(value)
      ? [...value, rng.pick(badValues(rng))]
      : { ...value, [rng.pick(badStrings) || 'extra']: rng.pick(badValues(rng)) };
  }
  return rng.pick(badValues(rng));
}

/** A path parameter, as it goes in the URL: an id of something the fuzz owns, garbage, or broken percent-encoding. */
export function badPathValue(rng: Random, owned: string[]): string {
  if (rng.chance(0.35) && owned.length > 0) {
    return encodeURIComponent(rng.pick(owned));
  }
  if (rng.chance(0.2)) {
    return rng.pick(['%', '%ff', '%E0%A4%A', '%00', '..%2F..%2F', '%ED%A0%80', ';', '~']);
  }
  return encodeURIComponent(
    rng.pick([
      'x',
      'x'.repeat(300),
      '..',
      '.',
      '/',
      '\u0000',
      '\u{1F600}',
      "'",
      '0',
      '-1',
      'null',
      'undefined',
      '__proto__',
      'private-keys',
      'cookie-keys',
    ]),
  );
}
