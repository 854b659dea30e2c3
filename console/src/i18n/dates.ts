import { ApiError } from '../api.ts';
import { currentLanguage, t } from './index.ts';

/**
 * Dates and times as the console's language writes them, shown and entered. Entry is a text field
 * in that language's own order (31.12.2026 18:30, 12/31/2026 18:30, 2026/12/31 18:30): the browser's
 * date controls follow the browser's locale, not the language chosen in the console.
 */

/** An instant as a date and a time ("31.12.2026, 18:30"); a dash for none. */
export const formatTime = (ms: number | null | undefined) =>
  ms ? new Intl.DateTimeFormat(currentLanguage(), { dateStyle: 'medium', timeStyle: 'short' }).format(ms) : '—';

/** A day of a chart's axis (UTC midnight) as month and day ("2. Dez.", "12月2日"). */
export const formatDay = (day: number) =>
  new Intl.DateTimeFormat(currentLanguage(), { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(day);

type Part = 'year' | 'month' | 'day' | 'hour' | 'minute';
const entryFormat = () =>
  new Intl.DateTimeFormat(currentLanguage(), {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });

/** How an entry looks in the console's language: the last day of this year at 18:30. */
export const entryExample = () => entryFormat().format(new Date(new Date().getFullYear(), 11, 31, 18, 30));

/** The order the language writes a date's and a time's numbers in (month first in English). */
const entryOrder = (): Part[] =>
  entryFormat()
    .formatToParts(0)
    .map((part) => part.type)
    .filter((type): type is Part => ['year', 'month', 'day', 'hour', 'minute'].includes(type));

const isoOrder: Part[] = ['year', 'month', 'day', 'hour', 'minute'];

/**
 * What was typed as an instant (local time), read in the language's order (or ISO 8601's,
 * 2026-12-31 18:30 or 2026-12-31T18:30); the time may be left out. Undefined for nothing typed; null for what is not a
 * date (letters other than CJK date marks, a 31 February, a two-digit year).
 */
export function parseEntry(text: string): number | null | undefined {
  const trimmed = text.trim();
  if (!trimmed) {
    return undefined;
  }
  const iso = /^\d{4}-\d{1,2}-\d{1,2}(?:[T ]+\d{1,2}:\d{1,2})?$/.test(trimmed);
  if (!iso && /\p{L}/u.test(trimmed.replace(/[年月日时時分]/g, ''))) {
    return null;
  }
  const numbers = trimmed.match(/\d+/g)?.map(Number) ?? [];
  if (numbers.length !== 3 && numbers.length !== 5) {
    return null;
  }
  const order = iso ? isoOrder : entryOrder();
  const value = { hour: 0, minute: 0 } as Record<Part, number>;
  order.slice(0, numbers.length).forEach((part, index) => (value[part] = numbers[index]));
  const date = new Date(value.year, value.month - 1, value.day, value.hour, value.minute);
  const same =
    value.year >= 1000 &&
    date.getFullYear() === value.year &&
    date.getMonth() === value.month - 1 &&
    date.getDate() === value.day &&
    date.getHours() === value.hour &&
    date.getMinutes() === value.minute;
  return same ? date.getTime() : null;
}

/** The instant a date field holds, or an error about that field (shown under it) if it holds no date. */
export function enteredInstant(values: Partial<Record<string, string>>, field: string): number | undefined {
  const instant = parseEntry(values[field] ?? '');
  if (instant === null) {
    throw new ApiError(0, 'console.invalid_date', t('dates.invalid', { example: entryExample() }), undefined, [
      { in: 'body', path: field },
    ]);
  }
  return instant;
}
