// The keys CLI on the store itself (DATA_DIR / DATABASE_URL): works with or without a running gateway, which
// sees a change within LOOKUP_CACHE_MS.
import { ApiKeys, type ApiKeyInfo } from "../keys/apiKeys.js";
import type { Wallets } from "../keys/custody/wallets.js";
import type { Stores } from "../store/openStores.js";
import { type KeyCommands, type KeyView, showKey, theOne, withChanged } from "./keyCommands.js";

const view = (k: ApiKeyInfo): KeyView => ({
  id: k.id,
  prefix: k.prefix,
  label: k.label,
  wallet: k.walletAddress,
  revokedAt: k.revokedAt?.toISOString(),
  limits: {
    requestsPerMinute: k.requestsPerMinute ?? undefined,
    writesPerDay: k.transactionsPerDay ?? undefined,
    writesPerMonth: k.writesPerMonth ?? undefined,
    allowedTargets: k.allowedTargets ?? undefined,
  },
});

export function localKeys(stores: Stores, wallets: Wallets): KeyCommands {
  const keys = new ApiKeys(stores.keys, wallets);
  const find = async (idOrPrefix: string): Promise<KeyView> => {
    const byId = await keys.get(idOrPrefix);
    return theOne(idOrPrefix, byId && view(byId), byId ? [] : (await keys.list(idOrPrefix)).map(view));
  };
  return {
    async create(label, l) {
      const { apiKey, info } = await keys.create({
        ...(label !== undefined ? { label } : {}),
        requestsPerMinute: l.requestsPerMinute,
        transactionsPerDay: l.writesPerDay,
        writesPerMonth: l.writesPerMonth,
        allowedTargets: l.allowedTargets,
      });
      return { apiKey, key: view(info) };
    },
    list: async (prefix) => (await keys.list(prefix)).map(view),
    revoke: async (idOrPrefix) => view(await keys.revoke(idOrPrefix)),
    async setLimits(idOrPrefix, change) {
      const k = await find(idOrPrefix);
      const l = withChanged(k.limits, change);
      return view(
        await keys.setLimits(k.id, {
          requestsPerMinute: l.requestsPerMinute,
          transactionsPerDay: l.writesPerDay,
          writesPerMonth: l.writesPerMonth,
          allowedTargets: l.allowedTargets,
        }),
      );
    },
    async usage(idOrPrefix) {
      const k = await find(idOrPrefix);
      const used = await stores.journal.countBySignerSince(k.wallet, new Date(Date.now() - 86_400_000));
      return (
        `${showKey(k)}\ntransactions in the last 24 h: ${used}${k.limits.writesPerDay ? ` of ${k.limits.writesPerDay}` : " (no daily quota)"}\n` +
        `requests: ${k.limits.requestsPerMinute ? `${k.limits.requestsPerMinute}/min` : "the network default"} (live counts: --admin-url, or X-RateLimit-* response headers)\n`
      );
    },
    close: () => stores.close(),
  };
}
