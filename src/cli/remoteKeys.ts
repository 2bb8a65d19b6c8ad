// The keys CLI through a running gateway's admin API (--admin-url, the token in ADMIN_TOKEN): no access to its
// store needed, a change applies at once, and usage is the gateway's live count.
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AdminService, type Key } from "../../gen/chaingateway/admin/v1/admin_pb.js";
import { type KeyCommands, type KeyLimitsView, type KeyView, showKey, theOne, withChanged } from "./keyCommands.js";

const view = (k: Key | undefined): KeyView => ({
  id: k?.id ?? "",
  prefix: k?.prefix ?? "",
  label: k?.label ?? "",
  wallet: k?.wallet ?? "",
  revokedAt: k?.revokedAt || undefined,
  limits: {
    requestsPerMinute: k?.limits?.requestsPerMinute,
    writesPerDay: k?.limits?.writesPerDay,
    writesPerMonth: k?.limits?.writesPerMonth,
    allowedTargets: k?.limits?.allowedTargets,
  },
});

const limits = (l: KeyLimitsView) => ({
  ...(l.requestsPerMinute !== undefined ? { requestsPerMinute: l.requestsPerMinute } : {}),
  ...(l.writesPerDay !== undefined ? { writesPerDay: l.writesPerDay } : {}),
  ...(l.writesPerMonth !== undefined ? { writesPerMonth: l.writesPerMonth } : {}),
  allowedTargets: l.allowedTargets ?? [],
});

/** `token`: ADMIN_TOKEN as the gateway has it; its first entry is used ("name:token" or a bare token). */
export function remoteKeys(adminUrl: string, token: string): KeyCommands {
  const bearer = token.split(",")[0]!.trim().split(":").pop()!;
  const admin = createClient(
    AdminService,
    createConnectTransport({
      baseUrl: adminUrl,
      httpVersion: "1.1",
      interceptors: [
        (next) => (req) => {
          req.header.set("authorization", `Bearer ${bearer}`);
          return next(req);
        },
      ],
    }),
  );
  const keysWith = async (prefix: string): Promise<Key[]> => (await admin.listKeys({ prefix })).keys;
  const find = async (idOrPrefix: string): Promise<Key> => {
    const all = await keysWith("");
    const byId = all.find((k) => k.id === idOrPrefix);
    const chosen = theOne(idOrPrefix, byId && view(byId), byId ? [] : all.filter((k) => k.prefix.startsWith(idOrPrefix)).map(view));
    return all.find((k) => k.id === chosen.id)!;
  };
  return {
    async create(label, l) {
      const res = await admin.createKey({ label: label ?? "", limits: limits(l) });
      return { apiKey: res.apiKey, key: view(res.key) };
    },
    list: async (prefix) => (await keysWith(prefix)).map(view),
    revoke: async (idOrPrefix) => view((await admin.revokeKey({ id: (await find(idOrPrefix)).id })).key),
    async setLimits(idOrPrefix, change) {
      const k = await find(idOrPrefix);
      return view((await admin.setKeyLimits({ id: k.id, limits: limits(withChanged(view(k).limits, change)) })).key);
    },
    async usage(idOrPrefix) {
      const k = await find(idOrPrefix);
      const u = k.usage;
      return (
        `${showKey(view(k))}\nrequests: ${u?.requestsMinute ?? 0n} this minute, ${u?.requestsDay ?? 0n} in 24 h, ${u?.requestsMonth ?? 0n} in 30 days\n` +
        `writes: ${u?.writesDay ?? 0n} in 24 h, ${u?.writesMonth ?? 0n} in 30 days (as the gateway at ${adminUrl} counts them)\n`
      );
    },
    close: async () => undefined,
  };
}
