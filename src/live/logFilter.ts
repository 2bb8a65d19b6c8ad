// A logs filter as geth takes it, and whether a log matches one. Kept apart from parsing it out of a request
// (parseLogFilter.ts) so that a fan-out shard, which only matches, loads none of the request-side code.
import type { FeedLog } from "./headFeed.js";

/** One address or several; per position a topic, any of several, or null (any). */
export interface LogFilter {
  addresses?: string[];
  topics?: (string[] | null)[];
}

export function matches(filter: LogFilter, log: FeedLog): boolean {
  if (filter.addresses && !filter.addresses.includes(log.address)) return false;
  const topics = filter.topics;
  if (!topics) return true;
  for (let i = 0; i < topics.length; i++) {
    const want = topics[i];
    if (want === null || want === undefined || want.length === 0) continue;
    const have = log.topics[i]?.toLowerCase();
    if (have === undefined || !want.includes(have)) return false;
  }
  return true;
}
