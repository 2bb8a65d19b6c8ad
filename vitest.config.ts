import { defineConfig } from "vitest/config";

/**
 * Files that bound others' latency in the same run (p99 ratios, event-loop delay) against a calm baseline, or
 * count refusals that need an attacker faster than the limit: on two cores, another file running beside them
 * is load they cannot tell from the gateway's own (or slows the attacker under the limit). They run after the
 * rest, one at a time.
 */
const TIMED = [
  "test/transport/http/h2RapidReset.test.ts",
  "test/transport/http/hostileSockets.test.ts",
  "test/zkt/refusalsCounted.test.ts",
  "test/zkt/hostileInput.test.ts",
  "test/rpc/callGasCap.test.ts",
  "test/metrics/prometheusScrape.test.ts",
  "test/keys/custody/hsmBurstLatency.test.ts",
  "test/keys/custody/pkcs11Wallets.test.ts",
  "test/transport/http/refusedAtAcceptMemory.test.ts",
];

const shared = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: "forks" as const,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: "suite",
          include: ["test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...TIMED],
          globalSetup: ["test/globalSetup.ts"],
          // Two cores: each file starts its own anvil(s); more parallel files only add contention.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: "timed",
          include: TIMED,
          globalSetup: ["test/globalBuild.ts"],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
