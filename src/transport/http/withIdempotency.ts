// Applies an Idempotency-Key request header to a write route: the first answer is replayed for retries if it
// was 2xx or came after the write was journaled (IdempotencyStore.once).
import { GatewayError } from "../../errors.js";
import { MAX_IDEMPOTENCY_KEY_LENGTH, type IdempotencyStore } from "../../store/idempotencyStore.js";
import type { HttpAnswer, RestRequest } from "./restRouter.js";
import type { WriteHooks } from "../../zkt/zktCore.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";

export async function withIdempotency(store: IdempotencyStore, scope: string, req: RestRequest, run: (hooks: WriteHooks) => Promise<HttpAnswer>): Promise<HttpAnswer> {
  const header = req.headers["idempotency-key"];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined) return run({});
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw new GatewayError("validation", `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  let fresh: HttpAnswer | undefined;
  // The payload is what the route acts on: its method, path (the key's scope is already in `scope`) and body.
  const stored = await store.once(scope, key, `${req.method} ${req.path}\n${await req.body()}`, async ({ journaled, journalKey }) => {
    fresh = await run({ journaled, idempotencyKey: journalKey });
    return { status: fresh.status, body: fresh.body ?? "" };
  }, (err) => {
    const answer = zktErrorAnswer(err);
    return { status: answer.status, body: answer.body ?? "" };
  });
  if (!stored.replayed && fresh) return fresh;
  return { status: stored.status, body: stored.body, contentType: "application/json", headers: { "idempotent-replayed": "true" } };
}
