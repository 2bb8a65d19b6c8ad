// Test gateways: real embedded anvil, free ports, logs captured so tests can inspect them.
import { isSealed } from "../../src/keys/sealedSeed.js";
import { expect } from "vitest";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig, type GatewayConfig, type NetworkName } from "../../src/config/config.js";
import { startGateway, type Gateway } from "../../src/gateway.js";
import { createLogger } from "../../src/log/logger.js";
import { until } from "./until.js";
import type { SqliteSubmissionStore } from "../../src/store/sqliteSubmissionStore.js";

export const LOG_FILE = "test-artifacts/server.log";
/** Master-seed phrases of every gateway the suite ran; the suite-wide teardown greps the log for them. */
export const SECRETS_FILE = "test-artifacts/secrets.txt";

export function recordSecret(phrase: string): void {
  mkdirSync("test-artifacts", { recursive: true });
  appendFileSync(SECRETS_FILE, phrase.trim() + "\n");
}

/** Records the seed a started gateway uses (its config's, or the one it generated into dataDir). */
export function recordGatewaySeed(config: GatewayConfig): void {
  const file = join(config.dataDir, "master-seed");
  if (config.masterMnemonic) recordSecret(config.masterMnemonic);
  // A sealed file is not the phrase (test/keys/sealedSeed.test.ts records what it seals).
  else if (existsSync(file) && !isSealed(readFileSync(file, "utf8"))) recordSecret(readFileSync(file, "utf8"));
}

export interface TestGatewayOptions {
  networks?: NetworkName[];
  mutate?: (config: GatewayConfig) => void;
}

export function testConfig(options: TestGatewayOptions = {}): GatewayConfig {
  const config = defaultConfig();
  const names = options.networks ?? ["testnet"];
  config.networks = config.networks.filter((n) => names.includes(n.name));
  for (const n of config.networks) n.port = 0;
  config.logLevel = "debug";
  // A fresh dev chain per gateway (test/chain/persistentDevChain.test.ts covers the kept one).
  config.embeddedState = false;
  config.dataDir = mkdtempSync(join(tmpdir(), "gw-data-"));
  options.mutate?.(config);
  return config;
}

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<Gateway> {
  mkdirSync("test-artifacts", { recursive: true });
  // Every server log line of the suite lands in one file, which the secrets test greps.
  const log = createLogger("debug", {}, (line) => appendFileSync(LOG_FILE, line));
  const config = testConfig(options);
  const gw = await startGateway(config, { log });
  recordGatewaySeed(config);
  return gw;
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** One JSON-RPC call straight to a node (or the gateway); its result, or its error thrown. */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(JSON.stringify(body.error));
  return body.result as T;
}

/** A test gateway's journal of a network (the sequencer's store), for what the HTTP surface does not show. */
export function journalOf(gw: Gateway, network: NetworkName = "testnet"): SqliteSubmissionStore {
  return (gw.network(network).sequencer as unknown as { options: { store: SqliteSubmissionStore } }).options.store;
}

/**
 * The writes (by queueId) whose ZKT status does not yet read "completed", as "queueId: status" — asked 50 at a
 * time, as one client's status reads are rate-limited like any other's.
 */
export async function notCompleted(url: string, queueIds: string[]): Promise<string[]> {
  const left: string[] = [];
  for (let i = 0; i < queueIds.length; i += 50)
    await Promise.all(
      queueIds.slice(i, i + 50).map(async (q) => {
        const res = await fetch(`${url}/zkt/transactions/${q}`);
        const status = res.status === 200 ? ((await res.json()) as { status: string }).status : `HTTP ${res.status}`;
        if (status !== "completed") left.push(`${q}: ${status}`);
      }),
    );
  return left;
}

/**
 * Every acknowledged write mined, once (a hash is one nonce of one signer), within `minedMs`, and its ZKT status
 * reading completed within 30 s after: the journal caught up with the chain (#63).
 */
export async function expectMinedOnceAndCompleted(
  node: string,
  url: string,
  acknowledged: { hash: string; queueId: string }[],
  minedMs = 60_000,
): Promise<void> {
  const unmined = async (): Promise<string[]> => {
    const left: string[] = [];
    for (let i = 0; i < acknowledged.length; i += 100) {
      const got = await Promise.all(acknowledged.slice(i, i + 100).map((a) => rpc(node, "eth_getTransactionReceipt", [a.hash])));
      got.forEach((r, j) => r === null && left.push(acknowledged[i + j]!.hash));
    }
    return left;
  };
  await until(async () => (await unmined()).length === 0, minedMs);
  expect(new Set(acknowledged.map((a) => a.hash)).size).toBe(acknowledged.length);
  let left: string[] = [];
  const ids = acknowledged.map((a) => a.queueId);
  await until(async () => (left = await notCompleted(url, ids)).length === 0, 30_000).catch(() => undefined);
  expect(left.slice(0, 5), `${left.length} of ${acknowledged.length} not completed`).toEqual([]);
}
