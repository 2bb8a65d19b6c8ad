// The timed group's global setup: dist/ built, as the main group's setup builds it (a timed file run alone
// still runs the bundle it tests). The log and secrets check belong to test/globalSetup.ts alone.
import { execFileSync } from "node:child_process";

export function setup(): void {
  execFileSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
}
