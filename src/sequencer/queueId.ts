// Submission ids that sort by creation time (UUID version 7: 48 bits of milliseconds, then random bits), so
// the journal's primary-key index takes each new id at its right edge. Random (version 4) ids landed on a
// random page of that index each, and every such page was written again at each commit (bench/README.md).
import { randomUUID } from "node:crypto";

/** A new id: the time part replaces a random UUID's first 48 bits, and its version digit becomes 7. */
export function newQueueId(now = Date.now()): string {
  const random = randomUUID(); // drawn from Node's cached entropy: cheaper than randomBytes per call
  const time = now.toString(16).padStart(12, "0");
  // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: the variant (y) is already RFC 4122's.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
