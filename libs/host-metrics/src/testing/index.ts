// The package ships no types; a project that imports this module from its source needs the declaration too.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./parse-prometheus-text-format.d.ts" />
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One sample line: its labels and value. */
export interface ExpositionSample {
  labels: Record<string, string>;
  value: number;
}

/** An exposition read by a parser independent of prom-client: each family's type, and every sample by its own name. */
export interface Exposition {
  /** Family name to COUNTER, GAUGE, HISTOGRAM, ... */
  types: Map<string, string>;
  /** Sample name (a histogram's `_bucket`, `_sum` and `_count` apart) to its samples. */
  samples: Map<string, ExpositionSample[]>;
}

/**
 * Parses an exposition in Prometheus' text format with parse-prometheus-text-format. That parser
 * merges the label sets of a histogram into one, so the samples are read a second time with the TYPE
 * lines left out: untyped, every `_bucket`, `_sum` and `_count` line keeps its labels.
 */
export function parseExposition(text: string): Exposition {
  const types = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f.type]));
  const untyped = parsePrometheusTextFormat(
    text
      .split('\n')
      .filter((line) => !line.startsWith('# TYPE '))
      .join('\n'),
  );
  // Untyped, each run of lines of one name is a family of its own: a histogram's label sets come as several.
  const samples = new Map<string, ExpositionSample[]>();
  for (const f of untyped) {
    const list = samples.get(f.name) ?? [];
    list.push(...f.metrics.map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) })));
    samples.set(f.name, list);
  }
  return { types, samples };
}

const matches = (s: ExpositionSample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);

/** The value of the first sample named `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  return e.samples.get(name)?.find((s) => matches(s, labels))?.value;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function sampleSum(e: Exposition, name: string, labels: Record<string, string> = {}): number {
  return (e.samples.get(name) ?? []).filter((s) => matches(s, labels)).reduce((n, s) => n + s.value, 0);
}
