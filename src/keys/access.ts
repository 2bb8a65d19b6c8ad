// Who is calling, once authenticated: the public, or the holder of an API key (whose wallet is master-seed
// index walletIndex, with the key's own limits when it has them).
export type Access =
  | { kind: "public" }
  | {
      kind: "key";
      keyId: string;
      walletIndex: number;
      requestsPerMinute?: number | null;
      transactionsPerDay?: number | null;
      /** Its own 30-day write quota (the operator's SetKeyLimits); null: KEY_WRITES_PER_MONTH. */
      writesPerMonth?: number | null;
      /** The only addresses its writes may go to (lowercase), when the operator limited it; null: any. */
      allowedTargets?: string[] | null;
    };

/** Resolves an API key to its access; throws an unauthorized GatewayError for unknown or revoked keys. */
export type Authenticate = (apiKey: string) => Promise<Access>;
