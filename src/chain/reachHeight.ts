// Waiting for a node to reach a block the gateway has already named. With the level node gone, the one left a
// block behind answered `latest` with the block before the one the gateway's own eth_blockNumber had given, and
// a receipt already seen came back null: a client following the head saw it go back. A node a block behind is
// a block behind for one block time, so the read waits (bounded) for a node to reach that height, asking the
// best node its head meanwhile; every read waiting for one height shares one wait.
import type { Upstream } from "./upstreamRouting.js";

/** How long a read waits for a node to reach a height the gateway already named. */
export const REACH_WAIT_MS = 3_000;
/** How often the best node is asked its head while reads wait. */
const ASK_EVERY_MS = 100;
/** A gap wider than this is not a lag but a node that went back (or a dead node's old head): no waiting. */
export const REACH_MAX_GAP = 4;

export type AskHead = (u: Upstream) => Promise<number | undefined>;

export class HeightWaits {
  private readonly waits = new Map<number, Promise<Upstream | undefined>>();

  constructor(private readonly askHead: AskHead) {}

  /**
   * A node of `nodes()` whose head is at least `height`, once one is (within REACH_WAIT_MS); undefined when
   * none got there. `nodes` is read again on every turn (health changes while reads wait).
   */
  reach(height: number, nodes: () => Upstream[]): Promise<Upstream | undefined> {
    let wait = this.waits.get(height);
    if (!wait) {
      wait = this.poll(height, nodes).finally(() => this.waits.delete(height));
      this.waits.set(height, wait);
    }
    return wait;
  }

  private async poll(height: number, nodes: () => Upstream[]): Promise<Upstream | undefined> {
    const deadline = performance.now() + REACH_WAIT_MS;
    for (;;) {
      const there = nodes().find((u) => u.head >= height);
      if (there) return there;
      const best = nodes().reduce<Upstream | undefined>((a, u) => (!a || u.head > a.head ? u : a), undefined);
      if (!best || performance.now() >= deadline) return undefined;
      await new Promise((r) => setTimeout(r, ASK_EVERY_MS));
      const head = await this.askHead(best).catch(() => undefined);
      if (head !== undefined && head > best.head) best.head = head;
    }
  }
}
