// The eth_subscription envelope: geth's shape around the shared result, and its byte length (which sizes the
// WebSocket frame header) for ASCII and non-ASCII results.
import { describe, expect, it } from "vitest";
import { notificationBytes, notificationText } from "../../src/live/notification.js";
import { newSubscriptionId } from "../../src/live/subscriptions.js";

describe("notification", () => {
  it("is geth's eth_subscription notification, and its length is its UTF-8 length", () => {
    const id = newSubscriptionId();
    for (const result of [{ number: "0x1" }, "0xabc", { extraData: "héllo ✓ 😀" }]) {
      const text = JSON.stringify(result);
      const r = { text, bytes: Buffer.byteLength(text) };
      const note = notificationText(id, r);
      expect(JSON.parse(note)).toEqual({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription: id, result } });
      expect(notificationBytes(id.length, r)).toBe(Buffer.byteLength(note));
    }
  });
});
