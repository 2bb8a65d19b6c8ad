// deploy/grafana-dashboard.json's queries, for the tests that check them (alerts.test.ts, prometheusScrape.test.ts).
import { readFileSync } from "node:fs";

/** Every expression of the dashboard's panels, with its panel's title. */
export function dashboardQueries(): { title: string; expr: string }[] {
  const dash = JSON.parse(readFileSync("deploy/grafana-dashboard.json", "utf8")) as { panels: { title: string; targets?: { expr: string }[] }[] };
  return dash.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })));
}
