// A webhook receiver for tests: records every delivery (arrival time, headers, body) and answers what the test
// says, by event id and attempt; verifies signatures the way the docs tell receivers to.
import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  at: number;
  id: string;
  type: string;
  body: string;
  json: { id: string; type: string; createdAt: string; network: string; data: Record<string, unknown> };
  headers: http.IncomingHttpHeaders;
  status: number;
}

export interface Receiver {
  url: string;
  got: Received[];
  /** The status to answer: given the event id and how many times it came before; 200 by default. */
  answer: (id: string, before: number) => number;
  close(): void;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: "", got: [], answer: () => 200, close: () => server.close() };
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += String(c);
    const json = JSON.parse(body) as Received["json"];
    const before = receiver.got.filter((g) => g.id === json.id).length;
    const status = receiver.answer(json.id, before);
    receiver.got.push({ at: performance.now(), id: json.id, type: json.type, body, json, headers: req.headers, status });
    res.writeHead(status).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/**
 * docs/WEBHOOKS.md's check: one of the v1 signatures matches (after a rotation there are two while the old secret
 * overlaps), and `t` is recent (a replay of an old delivery fails).
 */
export function verifySignature(header: string | undefined, body: string, secret: string, toleranceSeconds = 300): boolean {
  const parts = (header ?? "").split(",").map((kv) => kv.split("=", 2) as [string, string]);
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest();
  return parts.some(([k, v]) => {
    const given = Buffer.from(k === "v1" ? (v ?? "") : "", "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** How many v1 signatures a delivery carries. */
export const signatureCount = (header: string | undefined): number => (header ?? "").split(",").filter((kv) => kv.startsWith("v1=")).length;
