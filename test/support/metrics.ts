import { expect } from 'chai';
import parsePrometheusTextFormat, { type Family, type Sample } from 'parse-prometheus-text-format';

import type { ServiceClient } from './service.ts';

/**
 * What GET /metrics said, parsed by a Prometheus text-format parser (it throws on a malformed line).
 * The parser folds a histogram's labelled series into one, so values are read from a second parse
 * without `# TYPE` lines, where every series (`x_count{route="..."}`) is a sample of its own.
 */
export class Scrape {
  readonly families: Family[];
  readonly #series: Family[];

  constructor(text: string) {
    this.families = parsePrometheusTextFormat(text);
    this.#series = parsePrometheusTextFormat(
      text
        .split('\n')
        .filter((line) => !line.startsWith('# TYPE '))
        .join('\n'),
    );
  }

  family(name: string): Family {
    const found = this.families.find((family) => family.name === name);
    expect(found, `metric ${name}`).to.not.equal(undefined);
    return found!;
  }

  /** The series of `name` (a histogram's: `name_count`) whose labels include `labels`. */
  samples(name: string, labels: Record<string, string> = {}): Sample[] {
    const series = this.family(name).type === 'HISTOGRAM' ? `${name}_count` : name;
    return this.#series
      .filter((family) => family.name === series)
      .flatMap((family) => family.metrics)
      .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value));
  }

  /** A counter's or gauge's value, or a histogram's count, summed over the matching series (0 for none). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.samples(name, labels).reduce((sum, sample) => sum + Number(sample.value), 0);
  }
}

export async function scrape(service: ServiceClient, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await service.http.get('metrics', { responseType: 'text', headers });
  expect(response.statusCode, String(response.body).slice(0, 300)).to.equal(200);
  expect(String(response.headers['content-type'])).to.match(/^text\/plain; version=0\.0\.4/);
  return new Scrape(String(response.body));
}
