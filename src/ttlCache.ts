// The caches whose entries expire: lru-cache, with ttl checked against the monotonic clock (performance.now) at
// each read. lru-cache's default (ttlResolution 1 ms) caches the clock and arms a setTimeout to forget it: under
// load, a timer every millisecond per busy cache, on the request path.
import { LRUCache } from "lru-cache";

/** At most `max` entries, each kept `ttlMs` from when it was set; the least recently used goes first. */
export function ttlCache<K extends {}, V extends {}>(max: number, ttlMs: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ max, ttl: ttlMs, ttlResolution: 0 });
}
