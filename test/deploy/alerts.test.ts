// The operator's first day (#67): deploy/alerts.yml passes `promtool check rules`, and each alert fires in
// deploy/alerts.test.yml's unit tests on the series that should trigger it (and not before its `for`);
// deploy/grafana-dashboard.json names only metrics the gateway exports. (prometheusScrape.test.ts runs every
// panel's query against a real Prometheus scraping a gateway.) Debian's prometheus package; .ci/run installs it.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/metrics/metrics.js";
import { dashboardQueries } from "../helpers/dashboard.js";

const PROMTOOL = "/usr/bin/promtool";

describe("alerts and dashboard", () => {
  it.skipIf(!existsSync(PROMTOOL) && !process.env.CI)("promtool checks the rules and their unit tests fire each alert", () => {
    expect(execFileSync(PROMTOOL, ["check", "rules", "deploy/alerts.yml"], { encoding: "utf8" })).toMatch(/SUCCESS: 10 rules found/);
    expect(execFileSync(PROMTOOL, ["test", "rules", "deploy/alerts.test.yml"], { encoding: "utf8" })).toMatch(/SUCCESS/);
    // Every alert of the file has a test.
    const alerts = [...readFileSync("deploy/alerts.yml", "utf8").matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    const tested = new Set([...readFileSync("deploy/alerts.test.yml", "utf8").matchAll(/alertname: (\w+)/g)].map((m) => m[1]!));
    expect(alerts.filter((a) => !tested.has(a))).toEqual([]);
  });

  it("the dashboard and the alerts name only metrics the gateway exports", () => {
    const exported = new Set(
      (new Metrics().registry.getMetricsAsArray() as unknown as { name: string; type?: string }[]).flatMap((m) =>
        m.type === "histogram" ? [m.name, `${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name],
      ),
    );
    const named = [...dashboardQueries().map((q) => q.expr), readFileSync("deploy/alerts.yml", "utf8")].flatMap((e) =>
      [...e.matchAll(/\bgateway_[a-z0-9_]+/g)].map((m) => m[0]),
    );
    expect(named.length).toBeGreaterThan(30);
    expect([...new Set(named)].filter((n) => !exported.has(n))).toEqual([]);
  });
});
