/** Medians and ranges of a bench's rounds, as markdown. */

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** "1137–1207", or one figure when every round gave the same. */
export function range(values: number[], format: (value: number) => string): string {
  const low = format(Math.min(...values));
  const high = format(Math.max(...values));
  return low === high ? low : `${low}–${high}`;
}

/** "0.72 (0.67–0.74)": the median, then the range when the rounds differ. */
export function medianAndRange(values: number[], format: (value: number) => string): string {
  const spread = range(values, format);
  return spread === format(values[0]) ? spread : `${format(median(values))} (${spread})`;
}

export const whole = (value: number) => value.toFixed(0);
export const tenths = (value: number) => value.toFixed(1);
export const hundredths = (value: number) => value.toFixed(2);

export function table(header: string[], align: Array<'left' | 'right'>, rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${align.map((side) => (side === 'left' ? '---' : '---:')).join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}
