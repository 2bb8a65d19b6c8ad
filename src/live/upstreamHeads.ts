// A node's own new-heads WebSocket (eth_subscribe newHeads), used only as a wake-up for the head feed: each
// notification makes the feed read the chain at once instead of at its next poll. What is delivered still
// comes from the feed's reads by block number through the upstream pool (failover, gap filling, reorgs), so
// a socket that drops, lags or lies costs latency, never a block. Reconnects with backoff while wanted.
import WebSocket from "ws";
import { DoublingDelay, type DoublingDelaySettings } from "../resilience/doublingDelay.js";

export interface HeadWakeups {
  /** Starts following; `wake` is called on each new head, `live` when the subscription is up or down. */
  start(wake: () => void, live: (up: boolean) => void): void;
  stop(): void;
}

const SUBSCRIBE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] });

export function upstreamHeads(
  url: string,
  onError: (err: Error) => void = () => undefined,
  reconnect: DoublingDelaySettings = { firstMs: 500, maxMs: 30_000 },
): HeadWakeups {
  let socket: WebSocket | undefined;
  let retry: NodeJS.Timeout | undefined;
  let wanted = false;
  const backoff = new DoublingDelay(reconnect);

  const connect = (wake: () => void, live: (up: boolean) => void): void => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 20 });
    socket = ws;
    ws.on("open", () => ws.send(SUBSCRIBE));
    ws.on("message", (data) => {
      const text = String(data);
      // The subscription's id answers the subscribe; every later message on this socket is a head.
      if (text.includes('"eth_subscription"')) return wake();
      if (text.includes('"id":1') && text.includes('"result"')) {
        backoff.reset();
        live(true);
      } else if (text.includes('"error"')) ws.close();
    });
    ws.on("error", (err) => onError(err));
    ws.on("close", () => {
      live(false);
      if (!wanted || socket !== ws) return;
      retry = setTimeout(() => connect(wake, live), backoff.next());
      retry.unref?.();
    });
  };

  return {
    start(wake, live) {
      if (wanted) return;
      wanted = true;
      connect(wake, live);
    },
    stop() {
      wanted = false;
      clearTimeout(retry);
      socket?.terminate();
      socket = undefined;
    },
  };
}
