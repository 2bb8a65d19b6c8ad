// The caches whose entries expire: lru-cache, its ttl read from the monotonic clock (performance.now) at each check.
// lru-cache's default (ttlResolution 1 ms) keeps the clock's last reading and arms a setTimeout to forget it, a
// timer every millisecond per busy cache; performance.now() per check costs less than the timer (bench/README.md).
import { LRUCache } from "lru-cache";

/** At most `max` entries, each kept `ttlMs` from when it was set; the least recently used goes first. */
export function ttlCache<K extends {}, V extends {}>(max: number, ttlMs: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ max, ttl: ttlMs, ttlResolution: 0 });
}
