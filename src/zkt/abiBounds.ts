// How big a caller's ABI may be, checked before any of it is built. Its own module (no ethers): the body check
// that runs off the event loop (transport/zkt/bodyCheckWorker.ts) asks the same question the handlers do.
import { GatewayError, type JsonValue } from "../errors.js";

/** Most entries a caller's ABI may have (real contracts have tens to a few hundred). */
export const MAX_ABI_ENTRIES = 1_000;
/** Most bytes a caller's ABI may take as JSON. */
export const MAX_ABI_BYTES = 256 * 1024;

/** The ABI's entries, when it is a non-empty array within the bounds; a typed refusal otherwise. */
export function checkAbiBounds(abi: JsonValue): JsonValue[] {
  if (!Array.isArray(abi) || abi.length === 0)
    throw new GatewayError("validation", "abi must be a non-empty array of ABI entries (human-readable strings or JSON objects)");
  if (abi.length > MAX_ABI_ENTRIES)
    throw new GatewayError(
      "payload_too_large",
      `abi has ${abi.length} entries; at most ${MAX_ABI_ENTRIES} are accepted (send only the entries the call needs)`,
      {
        details: { entries: abi.length, limit: MAX_ABI_ENTRIES },
      },
    );
  abi.forEach((entry, i) => {
    if (typeof entry !== "string" && (typeof entry !== "object" || entry === null || Array.isArray(entry))) {
      throw new GatewayError("validation", `abi[${i}] must be a human-readable string or an ABI JSON object`);
    }
  });
  const bytes = JSON.stringify(abi).length;
  if (bytes > MAX_ABI_BYTES)
    throw new GatewayError("payload_too_large", `abi takes ${bytes} bytes; at most ${MAX_ABI_BYTES} are accepted (send only the entries the call needs)`, {
      details: { bytes, limit: MAX_ABI_BYTES },
    });
  return abi;
}
