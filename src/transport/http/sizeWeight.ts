// A large body (JSON-RPC or Connect over HTTP, a WebSocket message) counts by its size: its cost to the loop
// (read, parsed, its cache key and upstream request built) grows with its bytes, so its share of the limit does too.

/** Requests a body of `bytes` counts beyond its calls: one more for each `bytesPerRequest` past the first (0: none). */
export function sizeWeight(bytes: number, bytesPerRequest: number): number {
  return bytesPerRequest > 0 && bytes > bytesPerRequest ? Math.ceil(bytes / bytesPerRequest) - 1 : 0;
}
