// Our histogram must read, when scraped, exactly as prom-client's own would for the same observations.
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LatencyHistogram } from "../../src/metrics/latencyHistogram.js";

const BOUNDS = [0.001, 0.01, 0.1, 1];
const OBSERVED: [string, string, number][] = [
  ["testnet", "http://a:8545", 0.0005],
  ["testnet", "http://a:8545", 0.001], // on a bound: counted in that bucket (le)
  ["testnet", "http://a:8545", 0.05],
  ["testnet", "http://b:8545", 3], // above every bound: +Inf only
  ["mainnet", "http://c:8545", 0.2],
];

describe("LatencyHistogram", () => {
  it("scrapes identically to prom-client's Histogram, and resets", async () => {
    const theirs = new Registry();
    const reference = new Histogram({ name: "x_seconds", help: "h", labelNames: ["network", "upstream"], buckets: BOUNDS, registers: [theirs] });
    const ours = new Registry();
    const histogram = new LatencyHistogram<"network" | "upstream">("x_seconds", "h", BOUNDS, ours, ["network", "upstream"]);
    const series = new Map<string, ReturnType<typeof histogram.series>>();
    for (const [network, upstream, v] of OBSERVED) {
      reference.observe({ network, upstream }, v);
      const key = `${network} ${upstream}`;
      if (!series.has(key)) series.set(key, histogram.series({ network, upstream }));
      series.get(key)!.observe(v);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('x_seconds_bucket{le="0.001",network="testnet",upstream="http://a:8545"} 2');
    expect(text).toContain('x_seconds_bucket{le="+Inf",network="testnet",upstream="http://b:8545"} 1');

    ours.resetMetrics();
    expect(await ours.metrics()).toContain('x_seconds_count{network="testnet",upstream="http://a:8545"} 0');
  });
});
