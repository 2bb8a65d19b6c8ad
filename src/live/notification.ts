// geth's eth_subscription notification around a subscription's result, as JSON-RPC transports send it:
// {"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"<id>","result":<result>}}
import type { SharedResult } from "./subscriptions.js";

/** The envelope's text before the subscription id, between it and the result, and after the result (ASCII). */
export const BEFORE_ID = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"';
export const BEFORE_RESULT = '","result":';
export const AFTER_RESULT = "}}";

/** The notification's UTF-8 length: the result's, counted once per block, and the rest (ids are ASCII hex). */
export const notificationBytes = (idLength: number, r: SharedResult): number =>
  BEFORE_ID.length + idLength + BEFORE_RESULT.length + r.bytes + AFTER_RESULT.length;

export const notificationText = (id: string, r: SharedResult): string => BEFORE_ID + id + BEFORE_RESULT + r.text + AFTER_RESULT;
