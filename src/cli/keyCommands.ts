// What the keys CLI does, whichever way it reaches the keys: the store itself (localKeys.ts) or a running
// gateway's admin API (remoteKeys.ts, --admin-url). Both hand back the same view, printed the same way.

export interface KeyLimitsView {
  requestsPerMinute?: number | undefined;
  writesPerDay?: number | undefined;
  writesPerMonth?: number | undefined;
  allowedTargets?: string[] | undefined;
}

/** A change of limits: a value sets it, null clears it (`--rpm none`), undefined keeps it. */
export type KeyLimitsChange = { [K in keyof KeyLimitsView]?: KeyLimitsView[K] | null };

/**
 * A key's limits with `change` laid over them: a limit not named keeps its value (`limits --tpd` kept `--rpm`);
 * one named `none` is cleared (the network's default, or no quota).
 */
export function withChanged(current: KeyLimitsView, change: KeyLimitsChange): KeyLimitsView {
  const out: KeyLimitsView = { ...current };
  for (const [name, value] of Object.entries(change) as [keyof KeyLimitsView, KeyLimitsChange[keyof KeyLimitsView]][])
    if (value === null) delete out[name];
    else if (value !== undefined) (out as Record<string, unknown>)[name] = value;
  return out;
}

export interface KeyView {
  id: string;
  prefix: string;
  label: string;
  wallet: string;
  revokedAt?: string | undefined;
  limits: KeyLimitsView;
}

export interface KeyCommands {
  create(label: string | undefined, limits: KeyLimitsView): Promise<{ apiKey: string; key: KeyView }>;
  list(prefix: string): Promise<KeyView[]>;
  revoke(idOrPrefix: string): Promise<KeyView>;
  setLimits(idOrPrefix: string, limits: KeyLimitsChange): Promise<KeyView>;
  /** Lines describing the key's use. */
  usage(idOrPrefix: string): Promise<string>;
  close(): Promise<void>;
}

export function showKey(k: KeyView): string {
  const l = k.limits;
  const limits = [
    l.requestsPerMinute ? `${l.requestsPerMinute}/min` : "",
    l.writesPerDay ? `${l.writesPerDay} tx/day` : "",
    l.writesPerMonth ? `${l.writesPerMonth} tx/30 days` : "",
    l.allowedTargets && l.allowedTargets.length > 0 ? `writes only to ${l.allowedTargets.join(",")}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  return [k.prefix + "…", k.id, k.wallet, k.revokedAt ? `revoked ${k.revokedAt}` : "active", JSON.stringify(k.label), limits].filter(Boolean).join("  ");
}

/** The one key an id or a prefix names, among `candidates` (ListKeys by prefix); an error otherwise. */
export function theOne(idOrPrefix: string, byId: KeyView | undefined, candidates: KeyView[]): KeyView {
  if (byId) return byId;
  if (candidates.length === 1) return candidates[0]!;
  throw new Error(
    candidates.length === 0 ? `no API key matches "${idOrPrefix}"` : `"${idOrPrefix}" matches ${candidates.length} keys; give the id or a longer prefix`,
  );
}
