// The container recipe (#53), checked here where no image registry or Docker daemon is reachable: compose.yaml
// validated by Debian's docker-compose (.ci/run installs it), and the Dockerfile's promises read from it:
// Node 24, non-root, a data volume, a readiness health check, the Node flags npm start uses. Its build steps
// themselves (npm ci, build, prune to production) are what .ci/run's production install runs on a fresh clone.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const COMPOSE = ["/usr/bin/docker-compose", "/usr/local/bin/docker-compose"].find((p) => existsSync(p));

describe("the container recipe", () => {
  it("the Dockerfile runs Node 24 as a non-root user, with /data, a /readyz health check and npm start's flags", () => {
    const file = readFileSync("Dockerfile", "utf8");
    const stages = file.split(/^FROM /m).slice(1);
    expect(stages).toHaveLength(2);
    expect(stages.every((s) => s.startsWith("node:24"))).toBe(true);
    const run = stages[1]!;
    expect(run).toMatch(/^USER node$/m);
    expect(run).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(run).toMatch(/^HEALTHCHECK .*\n?.*\/readyz/m);
    const flags = (JSON.parse(readFileSync("package.json", "utf8")) as { config: { nodeFlags: string } }).config.nodeFlags.split(" ");
    const entry = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(run)![1]!) as string[];
    expect(entry).toEqual(["node", ...flags, "dist/main.mjs"]);
  });

  it("the build context leaves the host's node_modules, data directory (seed, journal) and builds out", () => {
    const entries = (file: string) =>
      readFileSync(file, "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "" && !l.startsWith("#"));
    const ignored = new Set(entries(".dockerignore"));
    for (const must of ["node_modules/", ".data/", "dist/", ".git"]) expect(ignored.has(must), must).toBe(true);
    // What git leaves out, the image leaves out.
    expect(entries(".gitignore").filter((e) => !ignored.has(e))).toEqual([]);
    // The modules are installed from the lockfile before the sources are copied, and never copied from the host.
    const build = readFileSync("Dockerfile", "utf8").split(/^FROM /m)[1]!;
    expect(build.indexOf("COPY package.json package-lock.json ./")).toBeLessThan(build.indexOf("RUN npm ci"));
    // One Node in the image: the base image's; the locked node-linux-* package is removed after the prune.
    expect(build).toMatch(/npm prune --omit=dev[^\n]*&& rm -rf node_modules\/node-linux-\* node_modules\/\.bin\/node$/m);
  });

  it.skipIf(!COMPOSE && !process.env.CI)("compose.yaml is valid, and refuses to start replicas without a shared MASTER_MNEMONIC", () => {
    const config = (env: Record<string, string>) =>
      execFileSync(COMPOSE ?? "docker-compose", ["-f", "compose.yaml", "config"], { env: { ...process.env, ...env }, encoding: "utf8", stdio: "pipe" });
    const rendered = config({ MASTER_MNEMONIC: "test test test test test test test test test test test junk" });
    expect(rendered).toMatch(/gateway-1:/);
    expect(rendered).toMatch(/gateway-2:/);
    expect(rendered).toMatch(/TRUSTED_PROXIES: 172\.16\.0\.0\/12/);
    const env = { ...process.env };
    delete env.MASTER_MNEMONIC;
    expect(() => execFileSync(COMPOSE ?? "docker-compose", ["-f", "compose.yaml", "config", "-q"], { env, stdio: "pipe" })).toThrow(/MASTER_MNEMONIC/);
  });
});
