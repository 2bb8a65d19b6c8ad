// A Prometheus histogram whose observe does no label work: each label set is a series found once and kept by
// the caller. prom-client's Histogram validates, hashes and looks up its label object on every observe, even
// through a bound child, and the proxy path observes once per upstream round trip (its cost: bench/README.md).
// prom-client's registry reads this as it reads its own histograms when scraped.
import type { Histogram, MetricValueWithName, Registry } from "prom-client";

export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Readonly<Record<string, string>>,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class LatencyHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly all: HistogramSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
    /** Its label names, as prom-client's metrics list theirs (the metrics reference reads them). */
    readonly labelNames: readonly L[],
  ) {
    // The registry's contract is name, help, type, aggregator, get() and reset(); its types list only
    // prom-client's own classes.
    registry.registerMetric(this as unknown as Histogram<L>);
  }

  /** A new series for one label set (the caller keeps it: asking twice makes two). */
  series(labels: Record<L, string>): HistogramSeries {
    const s = new HistogramSeries(this.bounds, labels);
    this.all.push(s);
    return s;
  }

  /** prom-client's shape: cumulative `_bucket` values with `le`, then `_sum` and `_count`, per series. */
  async get(): Promise<{ name: string; help: string; type: "histogram"; aggregator: "sum"; values: MetricValueWithName<string>[] }> {
    const values: MetricValueWithName<string>[] = [];
    for (const s of this.all) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: i < this.bounds.length ? this.bounds[i]! : "+Inf", ...s.labels }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: { ...s.labels }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...s.labels }, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.all) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
