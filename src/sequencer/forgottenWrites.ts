// A node that went back (a restart on older state, a rewind of any depth, the embedded chain's dump older
// than the journal) no longer has the newest writes the journal holds as completed. The chain follower
// reopens what it saw confirmed in its last blocks; deeper than that, and after a gateway restart (no blocks
// followed at all), only the journal knows. Its completed writes are made pending again where the node does
// not have them: the journal pass then sends their signed bytes in nonce order as it sends any unfinished
// write, and the lanes behind them move again.
//
// What decides is each signer's nonce on the node, not a window and not a run of hashes found: a completed
// write at or above the nonce its signer's account has reached cannot be in a block. That needs one call per
// signer, so a 100-block rewind's ~30,000 lost writes are found without a lookup each (looking each up, 200 a
// call, took longer than a loaded node answered, and a walk that failed half-way started over and never
// finished: 3,285 of 3,923 writes were left "completed" though not on chain, their lanes stuck behind the
// hole). Below that nonce a write is looked up by hash only where the node may hold the nonce spent without the
// block (anvil's state can be ahead of its blocks): near the top of each signer's history and, after a rewind,
// everything since its fork.
import pRetry from "p-retry";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { JsonValue } from "../errors.js";
import type { Logger } from "../log/logger.js";
import type { SubmissionRecord, SubmissionStore } from "../store/submissionStore.js";
import type { NonceSpenders } from "./nonceSpender.js";

/** Journal records read per page (most need no node call). */
const PAGE = 500;
/** Lookups per call (one JSON-RPC batch). */
const LOOKUP_BATCH = 200;
/** Below its mined nonce, a signer's newest writes looked up by hash before the rest are taken as mined. */
const SIGNER_RUN = 64;
/** Writes in a row, newest first, on the node (or below their signer's mined nonce) that end the walk. */
const FOUND_IN_A_ROW = 200;
/** Unfinished writes read to tell a lane's hole from writes still on their way. */
const UNFINISHED_LIMIT = 100_000;

export interface ForgottenWritesOptions {
  network: string;
  store: SubmissionStore;
  pool: Pick<UpstreamPool, "callMany">;
  log: Logger;
  /** Told how many writes were reopened (metrics). */
  onReopened?: (n: number) => void;
  /**
   * Where a write below its signer's mined nonce is not found by hash, the block that spent its nonce is read
   * (nonceSpender.ts): one found mined there stays completed. A node answering null by hash (an index being
   * rebuilt) otherwise had its mined writes reopened at every pass, resent, found mined again, and reopened.
   */
  spenders?: Pick<NonceSpenders, "of">;
}

export interface WalkBound {
  /**
   * Every completed write created after this is looked up before the walk may stop (the node went back to a
   * block walked then): writes sent after the node came back are on it, and a stretch of those must not end
   * the walk before the lost ones behind them.
   */
  since?: Date;
}

/** Makes completed writes the node does not have pending again; returns how many. */
export async function reopenForgottenWrites(
  { network, store, pool, log, onReopened, spenders }: ForgottenWritesOptions,
  bound: WalkBound = {},
): Promise<number> {
  const node = new NodeView(pool);
  const lanes = await store.laneHeads(network);
  await node.learnMined(lanes.map((l) => l.signer));
  const open = await lanesWithHoles(store, network, lanes, node);
  /** Per signer: its writes below the mined nonce found on the node in a row. */
  const run = new Map<string, number>();
  let reopened = 0;
  let foundInARow = 0;
  let pastBound = bound.since === undefined;
  let cursor: Date | undefined;
  /** Records at the page boundary's instant, already looked at (pages overlap at that one instant). */
  let atCursor = new Set<string>();
  while (open.size > 0 || !pastBound || foundInARow < FOUND_IN_A_ROW) {
    const page = (await store.listNewest(network, "completed", PAGE, cursor)).filter((r) => !atCursor.has(r.queueId));
    if (page.length === 0) break;
    // Caller-signed writes' signers have no lane: their nonce is asked when first met.
    await node.learnMined(page.map((r) => r.signer));
    const missing: SubmissionRecord[] = [];
    const lookUp: SubmissionRecord[] = [];
    for (const r of page) {
      if (r.nonce >= node.mined(r.signer)) {
        missing.push(r);
        continue;
      }
      // Its signer's older writes have lower nonces: no hole of this lane is further back.
      open.delete(r.signer);
      if (!pastBound || (run.get(r.signer) ?? 0) < SIGNER_RUN) lookUp.push(r);
    }
    const lost = new Set(await node.notInABlock(lookUp));
    if (spenders)
      for (const r of [...lost]) {
        // A re-signing of it with other fees counts as it (the spender compares the payload).
        const spent = await spenders.of(r, true);
        if (spent.verdict === "mined") lost.delete(r);
      }
    for (const r of lookUp) run.set(r.signer, lost.has(r) ? 0 : (run.get(r.signer) ?? 0) + 1);
    missing.push(...lost);
    // Gathered by the journal's status batcher into one statement; the last page's are written at once.
    await Promise.all(missing.map((rec, i) => store.update(rec.queueId, { status: "pending" }, { urgent: i === missing.length - 1 })));
    reopened += missing.length;
    if (missing.length > 0) onReopened?.(missing.length);
    const last = page[page.length - 1]!.createdAt;
    pastBound = bound.since === undefined || last < bound.since;
    foundInARow = missing.length === 0 && pastBound ? foundInARow + page.length : 0;
    atCursor = new Set([
      ...(cursor?.getTime() === last.getTime() ? atCursor : []),
      ...page.filter((r) => r.createdAt.getTime() === last.getTime()).map((r) => r.queueId),
    ]);
    cursor = last;
  }
  if (reopened > 0) log.warn("the node no longer has writes the journal has as completed: they are sent again", { reopened });
  return reopened;
}

/**
 * Signers whose journal handed out nonces the node has not mined and no unfinished write holds: a completed
 * write there is lost. (A lane only running ahead with writes on their way is not walked for.)
 */
async function lanesWithHoles(store: SubmissionStore, network: string, lanes: { signer: string; next: number }[], node: NodeView): Promise<Set<string>> {
  const behind = lanes.filter((l) => l.next > node.mined(l.signer));
  if (behind.length === 0) return new Set();
  const held = new Map<string, Set<number>>();
  for (const r of await store.listUnfinished(network, UNFINISHED_LIMIT)) {
    let nonces = held.get(r.signer);
    if (!nonces) held.set(r.signer, (nonces = new Set()));
    nonces.add(r.nonce);
  }
  const open = new Set<string>();
  for (const { signer, next } of behind) {
    const nonces = held.get(signer);
    for (let n = node.mined(signer); n < next; n++)
      if (!nonces?.has(n)) {
        open.add(signer);
        break;
      }
  }
  return open;
}

/** What the node holds, asked in batches, each retried a few times (a loaded node drops some). */
class NodeView {
  private readonly minedBy = new Map<string, number>();

  constructor(private readonly pool: ForgottenWritesOptions["pool"]) {}

  /** The signer's mined nonce (learnMined first). */
  mined(signer: string): number {
    return this.minedBy.get(signer) ?? 0;
  }

  async learnMined(signers: string[]): Promise<void> {
    const unknown = [...new Set(signers)].filter((s) => !this.minedBy.has(s));
    const counts = await this.ask(
      "eth_getTransactionCount",
      unknown.map((s) => [s, "latest"]),
    );
    unknown.forEach((s, i) => this.minedBy.set(s, Number(BigInt(counts[i] as string))));
  }

  /** Of these, the ones in no block: only in the node's pool (a block that held it is gone) is not "completed" either. */
  async notInABlock(records: SubmissionRecord[]): Promise<SubmissionRecord[]> {
    const txs = await this.ask(
      "eth_getTransactionByHash",
      records.map((r) => [r.hash]),
    );
    return records.filter((_, i) => txs[i] === null || (txs[i] as { blockNumber?: unknown }).blockNumber == null);
  }

  private async ask(method: string, paramsList: JsonValue[][]): Promise<JsonValue[]> {
    const out: JsonValue[] = [];
    for (let at = 0; at < paramsList.length; at += LOOKUP_BATCH) {
      const chunk = paramsList.slice(at, at + LOOKUP_BATCH);
      const answers = await pRetry(
        async () => {
          const outcomes = await this.pool.callMany(chunk.map((params) => ({ method, params })));
          return outcomes.map((o) => {
            if (!o?.ok) throw o?.error ?? new Error(`no answer to ${method}`);
            return o.result;
          });
        },
        { retries: 5, minTimeout: 200, maxTimeout: 2_000 },
      );
      out.push(...answers);
    }
    return out;
  }
}
