// A JSON-RPC proxy in front of a real node that can fail chosen requests with 503 (transient faults),
// answer them slowly (an overloaded node), or take transactions and lose them (a node whose pool was
// emptied by a restart), counting the requests that match.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { keccak256 } from "ethers";

export interface FaultyUpstream {
  url: string;
  /** Requests whose body matches are answered 503 while this many failures remain. */
  failNext(count: number, match: RegExp): void;
  /** Requests whose body matches are counted from zero and answered after `ms`, the first `fail` of them with 503. */
  slow(ms: number, match: RegExp, fail?: number): void;
  /** Requests calling `method` are answered "method not found" (-32601), as by a node without it. */
  refuse(method: string): void;
  /** eth_getLogs over more than `blocks` blocks (numeric fromBlock/toBlock) is refused with -32005, as nodes cap it. */
  capLogRange(blocks: number): void;
  /** eth_getLogs calls received (each refused or passed on). */
  readonly logQueries: number;
  /** The next `count` transactions sent (alone or in batches) are answered with their hash and never reach the node. */
  lose(count: number): void;
  /** The next `count` transactions sent alone are refused for good (-32000), as a node refuses an invalid one. */
  reject(count: number): void;
  /** How many transactions were lost so far. */
  lost: number;
  /** JSON-RPC calls received since start (a batch counts its size). */
  readonly calls: number;
  /** Calls received since start, by method. */
  callsOf(method: string): number;
  /** How many requests matched a fault rule (failed or not). */
  matched: number;
  /** While true, every connection is reset at once: a stopped node. */
  down: boolean;
  /**
   * Keeps a filter table of its own, as a second node would: a filter id made through another proxy (of the same
   * node) is answered "filter not found".
   */
  ownFilters(): void;
  /**
   * Lies in single calls (probes, which are batches, stay true): eth_getLogs answers gain a log from outside the
   * range asked, and eth_getBlockByNumber("latest") answers a block 3 older.
   */
  lie(): void;
  /**
   * eth_getTransactionByHash and eth_getTransactionReceipt answer null for this share of hashes (chosen by the
   * hash, so the same ones every time), alone or in batches: a node rebuilding its transaction index, one
   * with limited history, a balancer's lagging member. Everything else (blocks, nonces) stays true.
   */
  hideHashes(share: number): void;
  /**
   * Plays a node `blocks` behind the real one (the usual state of one node in a pool): its head, `latest`, blocks
   * past its head (null) and log ranges past it (cut) are as that node would answer; state reads pass through.
   */
  lagBehind(blocks: number): void;
  /** This share of sends (at random, each time) are answered with the transaction's hash and never reach the node. */
  dropSends(share: number): void;
  /**
   * eth_getTransactionCount at a numbered block is refused as by a node without past states (geth's "missing
   * trie node": pruned, or anvil restarted on a dump), alone or in batches.
   */
  forgetPastStates(): void;
  /** By-hash answers made null so far. */
  readonly hidden: number;
  close(): void;
}

export async function startFaultyUpstream(nodeUrl: string): Promise<FaultyUpstream> {
  let left = 0;
  let delayMs = 0;
  let rule = /$^/;
  let refused: string | undefined;
  const state = { matched: 0, toLose: 0, toReject: 0, lost: 0, calls: 0, logCap: 0, logQueries: 0, down: false };
  /** Filter ids this proxy made, when it keeps its own table (undefined: it does not). */
  let filters: Set<string> | undefined;
  let lying = false;
  let lag = 0;
  let dropShare = 0;
  let hiddenShare = 0;
  let hidden = 0;
  let noPastStates = false;
  const byMethod = new Map<string, number>();
  const hides = (hash: unknown): boolean =>
    typeof hash === "string" && /^0x[0-9a-fA-F]{8}/.test(hash) && Number.parseInt(hash.slice(2, 10), 16) / 0x1_0000_0000 < hiddenShare;
  // Any path that asks the node: when the node is gone or resets the connection, answer as a proxy would, not
  // with an unhandled rejection in whichever test runs next (one failed a CI run: ECONNRESET in boundedLogs).
  const server = http.createServer(
    (req, res) =>
      void serve(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(502).end("bad gateway");
        else res.destroy();
      }),
  );
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    if (state.down) return void req.socket.destroy();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    for (const [, method] of body.matchAll(/"method"\s*:\s*"([^"]*)"/g)) {
      state.calls++;
      byMethod.set(method!, (byMethod.get(method!) ?? 0) + 1);
    }
    if (noPastStates && /"method":"eth_getTransactionCount","params":\["0x[0-9a-fA-F]{40}","0x/.test(body)) {
      type Call = { jsonrpc: string; id: unknown; method: string; params: unknown[] };
      const calls = JSON.parse(body) as Call | Call[];
      const list = Array.isArray(calls) ? calls : [calls];
      const past = (c: Call) => c.method === "eth_getTransactionCount" && typeof c.params[1] === "string" && c.params[1].startsWith("0x");
      const forward = list.filter((c) => !past(c));
      const got =
        forward.length === 0
          ? []
          : ((await (await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(forward) })).json()) as {
              id: unknown;
            }[]);
      const answers = list.map((c) =>
        past(c)
          ? { jsonrpc: "2.0", id: c.id, error: { code: -32000, message: "missing trie node (state is not available)" } }
          : got.find((a) => a.id === c.id)!,
      );
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
      return;
    }
    if (filters && /"method":"eth_(?:newFilter|newBlockFilter|newPendingTransactionFilter|getFilterChanges|getFilterLogs|uninstallFilter)"/.test(body)) {
      type Call = { id: unknown; method: string; params: unknown[] };
      const calls = JSON.parse(body) as Call | Call[];
      const answers = [];
      for (const c of Array.isArray(calls) ? calls : [calls]) {
        const id = typeof c.params[0] === "string" ? c.params[0].toLowerCase() : "";
        if (/^eth_(getFilter|uninstall)/.test(c.method) && !filters.has(id)) {
          answers.push({ jsonrpc: "2.0", id: c.id, error: { code: -32000, message: "filter not found" } });
          continue;
        }
        const answer = (await (await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(c) })).json()) as {
          result?: unknown;
        };
        if (c.method.startsWith("eth_new") && typeof answer.result === "string") filters.add(answer.result.toLowerCase());
        answers.push(answer);
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
      return;
    }
    if (refused !== undefined && body.includes(`"method":"${refused}"`)) {
      const calls = JSON.parse(body) as { id: unknown } | { id: unknown }[];
      const error = (c: { id: unknown }) => ({ jsonrpc: "2.0", id: c.id, error: { code: -32601, message: `Method not found: ${refused}` } });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? calls.map(error) : error(calls)));
      return;
    }
    if (state.logCap > 0 && body.includes('"method":"eth_getLogs"')) {
      // Each call on its own: a capped eth_getLogs is refused, anything else goes to the node.
      type Call = { id: unknown; method: string; params: { fromBlock?: string; toBlock?: string }[] };
      const calls = JSON.parse(body) as Call | Call[];
      const answers = [];
      for (const c of Array.isArray(calls) ? calls : [calls]) {
        const f = c.params[0] ?? {};
        if (c.method === "eth_getLogs") state.logQueries++;
        const wide =
          c.method === "eth_getLogs" &&
          f.fromBlock?.startsWith("0x") &&
          f.toBlock?.startsWith("0x") &&
          Number(f.toBlock) - Number(f.fromBlock) + 1 > state.logCap;
        if (wide) answers.push({ jsonrpc: "2.0", id: c.id, error: { code: -32005, message: `query exceeds max block range ${state.logCap}` } });
        else answers.push(await (await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(c) })).json());
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
      return;
    }
    if (state.toReject > 0 && body.startsWith("{") && body.includes('"method":"eth_sendRawTransaction"')) {
      state.toReject--;
      const c = JSON.parse(body) as { id: unknown };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: c.id, error: { code: -32000, message: "invalid transaction: refused by the test" } }));
      return;
    }
    if (state.toLose > 0 && body.includes('"method":"eth_sendRawTransaction"')) {
      const calls = JSON.parse(body) as { id: unknown; method: string; params: string[] } | { id: unknown; method: string; params: string[] }[];
      const list = Array.isArray(calls) ? calls : [calls];
      if (list.every((c) => c.method === "eth_sendRawTransaction") && list.length <= state.toLose) {
        state.toLose -= list.length;
        state.lost += list.length;
        const answers = list.map((c) => ({ jsonrpc: "2.0", id: c.id, result: keccak256(c.params[0]!) }));
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
        return;
      }
    }
    if (dropShare > 0 && body.includes('"method":"eth_sendRawTransaction"')) {
      type Call = { jsonrpc: string; id: unknown; method: string; params: string[] };
      const calls = JSON.parse(body) as Call | Call[];
      const list = Array.isArray(calls) ? calls : [calls];
      const answers: { id: unknown }[] = [];
      const forward: Call[] = [];
      for (const c of list) {
        const hash = c.method === "eth_sendRawTransaction" ? keccak256(c.params[0]!) : undefined;
        if (hash && Math.random() < dropShare) {
          state.lost++;
          answers.push({ jsonrpc: "2.0", id: c.id, result: hash } as { id: unknown });
        } else forward.push(c);
      }
      if (forward.length > 0) {
        const got = (await (
          await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(forward) })
        ).json()) as {
          id: unknown;
        }[];
        answers.push(...got);
      }
      const ordered = list.map((c) => answers.find((a) => a.id === c.id)!);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? ordered : ordered[0]));
      return;
    }
    if (lag > 0) {
      type Call = { jsonrpc: string; id: unknown; method: string; params: unknown[] };
      const calls = JSON.parse(body) as Call | Call[];
      const list = Array.isArray(calls) ? calls : [calls];
      const ask = async (batch: unknown[]) =>
        (await (await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(batch) })).json()) as {
          id: unknown;
          result?: unknown;
        }[];
      const real = (await ask([{ jsonrpc: "2.0", id: "head", method: "eth_blockNumber", params: [] }]))[0]?.result;
      const head = Math.max(0, Number(real) - lag);
      const hex = `0x${head.toString(16)}`;
      const answers: { id: unknown; result?: unknown; jsonrpc?: string }[] = [];
      const forward: Call[] = [];
      for (const c of list) {
        if (c.method === "eth_blockNumber") answers.push({ jsonrpc: "2.0", id: c.id, result: hex });
        else if (c.method === "eth_getBlockByNumber") {
          const tag = c.params[0];
          const n = tag === "latest" || tag === "pending" ? head : typeof tag === "string" && tag.startsWith("0x") ? Number(tag) : undefined;
          if (n !== undefined && n > head) answers.push({ jsonrpc: "2.0", id: c.id, result: null });
          else forward.push(n === undefined ? c : { ...c, params: [`0x${n.toString(16)}`, ...c.params.slice(1)] });
        } else if (c.method === "eth_getLogs") {
          const f = { ...(c.params[0] as Record<string, string>) };
          if (f.blockHash === undefined) {
            const to = f.toBlock === undefined || f.toBlock === "latest" || f.toBlock === "pending" ? head : Math.min(Number(f.toBlock), head);
            f.toBlock = `0x${to.toString(16)}`;
            if (f.fromBlock === "latest" || f.fromBlock === "pending") f.fromBlock = f.toBlock;
          }
          if (f.fromBlock?.startsWith("0x") && Number(f.fromBlock) > Number(f.toBlock)) answers.push({ jsonrpc: "2.0", id: c.id, result: [] });
          else forward.push({ ...c, params: [f] });
        } else forward.push(c);
      }
      if (forward.length > 0) answers.push(...(await ask(forward)));
      // A transaction in a block past this node's head is one it does not know yet.
      for (const a of answers) {
        const c = list.find((x) => x.id === a.id);
        const mined = a.result as { blockNumber?: string | null } | null | undefined;
        if (c && /^eth_getTransaction(ByHash|Receipt)$/.test(c.method) && mined?.blockNumber && Number(mined.blockNumber) > head) a.result = null;
      }
      const ordered = list.map((c) => answers.find((a) => a.id === c.id)!);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? ordered : ordered[0]));
      return;
    }
    if (hiddenShare > 0 && /"method":"eth_getTransaction(ByHash|Receipt)"/.test(body)) {
      type Call = { id: unknown; method: string; params: unknown[] };
      const calls = JSON.parse(body) as Call | Call[];
      const list = Array.isArray(calls) ? calls : [calls];
      const answers = (await (
        await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(list) })
      ).json()) as { id: unknown; result?: unknown }[];
      for (const a of answers) {
        const c = list.find((x) => x.id === a.id);
        if (c && /^eth_getTransaction(ByHash|Receipt)$/.test(c.method) && a.result != null && hides(c.params[0])) {
          a.result = null;
          hidden++;
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
      return;
    }
    if (lying && body.startsWith("{") && /"method":"(eth_getLogs|eth_getBlockByNumber)"/.test(body)) {
      type Call = { id: unknown; method: string; params: unknown[] };
      const c = JSON.parse(body) as Call;
      const ask = (call: Call) =>
        fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(call) }).then(
          (r) => r.json() as Promise<{ result?: unknown }>,
        );
      let answer = await ask(c);
      if (c.method === "eth_getLogs" && Array.isArray(answer.result) && answer.result.length > 0) {
        const log = answer.result[0] as { blockNumber: string; blockHash: string };
        answer.result.push({ ...log, blockNumber: "0xfffff0", blockHash: "0x" + "ee".repeat(32) });
      } else if (c.method === "eth_getBlockByNumber" && c.params[0] === "latest") {
        const head = Number((answer.result as { number: string }).number);
        answer = await ask({ ...c, params: ["0x" + Math.max(0, head - 3).toString(16), c.params[1]] });
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      return;
    }
    if (rule.test(body)) {
      state.matched++;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      if (left > 0) {
        left--;
        res.writeHead(503).end("overloaded");
        return;
      }
    }
    const upstream = await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
    res.writeHead(upstream.status, { "content-type": "application/json" }).end(await upstream.text());
  };
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failNext(count, match) {
      left = count;
      delayMs = 0;
      rule = match;
    },
    slow(ms, match, fail = 0) {
      left = fail;
      delayMs = ms;
      rule = match;
      state.matched = 0;
    },
    dropSends(share) {
      dropShare = share;
    },
    forgetPastStates() {
      noPastStates = true;
    },
    lagBehind(blocks) {
      lag = blocks;
    },
    hideHashes(share) {
      hiddenShare = share;
    },
    get hidden() {
      return hidden;
    },
    refuse(method) {
      refused = method;
    },
    lose(count) {
      state.toLose = count;
    },
    reject(count) {
      state.toReject = count;
    },
    capLogRange(blocks) {
      state.logCap = blocks;
    },
    get logQueries() {
      return state.logQueries;
    },
    get lost() {
      return state.lost;
    },
    get calls() {
      return state.calls;
    },
    callsOf(method) {
      return byMethod.get(method) ?? 0;
    },
    get matched() {
      return state.matched;
    },
    get down() {
      return state.down;
    },
    set down(on: boolean) {
      state.down = on;
      if (on) server.closeAllConnections();
    },
    ownFilters() {
      filters = new Set();
    },
    lie() {
      lying = true;
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
