// The operator's admin API (admin.proto) for one network's port: keys (the gateway's), this network's
// upstreams and unfinished writes. The guard has checked the admin token (policy/operations.ts); what changes
// something is written to the audit log with the token's name, the action and its target.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AdminService, KeyLimits, KeySchema, UpstreamSchema, WriteSchema } from "../../gen/chaingateway/admin/v1/admin_pb.js";
import { GatewayError } from "../errors.js";
import type { ApiKeyInfo, ApiKeys, KeyLimits as OwnLimits } from "../keys/apiKeys.js";
import type { Access } from "../keys/access.js";
import type { KeyUsage } from "../limits/rateLimits.js";
import type { ReloadOutcome } from "../config/reload.js";
import type { Logger } from "../log/logger.js";
import type { UpstreamPool, UpstreamState } from "../chain/upstreamPool.js";
import type { Sequencer } from "../sequencer/sequencer.js";
import type { SubmissionRecord } from "../store/submissionStore.js";
import { adminKey } from "./context.js";

export interface AdminDeps {
  network: string;
  keys: ApiKeys;
  pool: UpstreamPool;
  sequencer: Sequencer;
  /** A key's use on this network (the rate limits' count). */
  usageOf: (access: Extract<Access, { kind: "key" }>) => KeyUsage;
  /** ListStuckWrites' default threshold (STUCK_TRANSACTION_MS). */
  stuckAfterMs: number;
  /** Where audit lines go. */
  log: Logger;
  /** Reloads the gateway's configuration (every network's); absent, ReloadConfig is refused. */
  reload?: () => ReloadOutcome;
  /** Rotates a key's callback secret (webhooks/writeCallbacks.ts). */
  rotateCallbackSecret: (keyId: string) => Promise<{ secret: string; previousUntil: Date }>;
}

const MAX_LISTED_WRITES = 10_000;

export function adminHandlers(deps: AdminDeps): ServiceImpl<typeof AdminService> {
  const { keys, pool, sequencer } = deps;
  const audit = (ctx: HandlerContext, action: string, target: Record<string, unknown>): void =>
    deps.log.info("admin action", { audit: true, admin: ctx.values.get(adminKey), action, network: deps.network, ...target });
  const key = (k: ApiKeyInfo): MessageInitShape<typeof KeySchema> => {
    const usage = deps.usageOf({ kind: "key", keyId: k.id, walletIndex: k.walletIndex });
    return {
      id: k.id,
      prefix: k.prefix,
      label: k.label,
      wallet: k.walletAddress,
      previousWallets: k.previousWallets.map((w) => w.address),
      createdAt: k.createdAt.toISOString(),
      revokedAt: k.revokedAt?.toISOString() ?? "",
      limits: {
        ...(k.requestsPerMinute !== null ? { requestsPerMinute: k.requestsPerMinute } : {}),
        ...(k.transactionsPerDay !== null ? { writesPerDay: k.transactionsPerDay } : {}),
        ...(k.writesPerMonth !== null ? { writesPerMonth: k.writesPerMonth } : {}),
        allowedTargets: k.allowedTargets ?? [],
      },
      usage: {
        requestsMinute: BigInt(usage.requests.minute),
        requestsDay: BigInt(usage.requests.day),
        requestsMonth: BigInt(usage.requests.month),
        writesDay: BigInt(usage.writes.day),
        writesMonth: BigInt(usage.writes.month),
      },
    };
  };
  return {
    async listKeys(req) {
      return { keys: (await keys.list(req.prefix)).map(key) };
    },
    async createKey(req, ctx) {
      const { apiKey, info } = await keys.create({ label: req.label, ...ownLimits(req.limits) });
      audit(ctx, "CreateKey", { keyId: info.id, prefix: info.prefix });
      return { apiKey, key: key(info) };
    },
    async revokeKey(req, ctx) {
      const info = await keys.revoke(requireId(req.id));
      audit(ctx, "RevokeKey", { keyId: info.id, prefix: info.prefix });
      return { key: key(info) };
    },
    async moveKeyWallet(req, ctx) {
      const info = await keys.moveWallet(requireId(req.id));
      audit(ctx, "MoveKeyWallet", { keyId: info.id, prefix: info.prefix, wallet: info.walletAddress, from: info.previousWallets.at(-1)?.address });
      return { key: key(info) };
    },
    async rotateCallbackSecret(req, ctx) {
      const info = await keys.get(requireId(req.id));
      if (!info) throw new GatewayError("not_found", `no API key has the id "${req.id}"`);
      const { secret, previousUntil } = await deps.rotateCallbackSecret(info.id);
      audit(ctx, "RotateCallbackSecret", { keyId: info.id, prefix: info.prefix });
      return { secret, previousValidUntil: previousUntil.toISOString() };
    },
    async setKeyLimits(req, ctx) {
      const limits = ownLimits(req.limits);
      const info = await keys.setLimits(requireId(req.id), limits);
      audit(ctx, "SetKeyLimits", { keyId: info.id, prefix: info.prefix, limits });
      return { key: key(info) };
    },
    listUpstreams() {
      return { upstreams: pool.states().map(upstream) };
    },
    cordonUpstream(req, ctx) {
      const state = pool.cordon(req.url, true);
      audit(ctx, "CordonUpstream", { upstream: state.url });
      return { upstream: upstream(state) };
    },
    uncordonUpstream(req, ctx) {
      const state = pool.cordon(req.url, false);
      audit(ctx, "UncordonUpstream", { upstream: state.url });
      return { upstream: upstream(state) };
    },
    async listStuckWrites(req) {
      const olderThanMs = req.olderThanSeconds > 0 ? req.olderThanSeconds * 1000 : deps.stuckAfterMs;
      const records = await sequencer.listStuck(olderThanMs, Math.min(req.limit || 1_000, MAX_LISTED_WRITES));
      const bySigner = new Map<string, MessageInitShape<typeof WriteSchema>[]>();
      for (const rec of records) {
        const list = bySigner.get(rec.signer) ?? [];
        list.push(write(rec));
        bySigner.set(rec.signer, list);
      }
      return { signers: [...bySigner].map(([signer, writes]) => ({ signer, writes: writes.sort((a, b) => Number(a.nonce) - Number(b.nonce)) })) };
    },
    async resendWrite(req, ctx) {
      const rec = await sequencer.resend(requireId(req.queueId));
      audit(ctx, "ResendWrite", { queueId: rec.queueId, signer: rec.signer, nonce: rec.nonce });
      return { write: write(rec) };
    },
    reloadConfig(_req, ctx) {
      if (!deps.reload) throw new GatewayError("conflict", "this gateway cannot reload its configuration");
      const { changed } = deps.reload();
      audit(ctx, "ReloadConfig", { changed });
      return { changed };
    },
    async cancelWrite(req, ctx) {
      const admin = ctx.values.get(adminKey) ?? "admin";
      const { write: rec, filler } = await sequencer.cancel(requireId(req.queueId), `cancelled by the operator (${admin}): a no-op took its nonce`);
      audit(ctx, "CancelWrite", { queueId: rec.queueId, signer: rec.signer, nonce: rec.nonce, filler: filler.queueId });
      return { write: write(rec), fillerQueueId: filler.queueId, fillerHash: filler.hash };
    },
  };
}

function requireId(id: string): string {
  if (id.trim() === "") throw new GatewayError("validation", "an id is required");
  return id.trim();
}

/** The proto's limits as the keys take them: unset fields (and 0) fall back to the gateway's settings. */
function ownLimits(limits: KeyLimits | undefined): OwnLimits {
  const positive = (n: number | undefined): number | undefined => (n === undefined || n === 0 ? undefined : n);
  return {
    requestsPerMinute: positive(limits?.requestsPerMinute),
    transactionsPerDay: positive(limits?.writesPerDay),
    writesPerMonth: positive(limits?.writesPerMonth),
    allowedTargets: limits?.allowedTargets ?? [],
  };
}

function upstream(s: UpstreamState): MessageInitShape<typeof UpstreamSchema> {
  return { ...s, head: BigInt(s.head), lag: BigInt(s.lag) };
}

function write(rec: SubmissionRecord): MessageInitShape<typeof WriteSchema> {
  return {
    queueId: rec.queueId,
    signer: rec.signer,
    nonce: BigInt(rec.nonce),
    hash: rec.hash,
    status: rec.status,
    kind: rec.kind,
    createdAt: rec.createdAt.toISOString(),
    ageSeconds: BigInt(Math.max(0, Math.floor((Date.now() - rec.createdAt.getTime()) / 1000))),
  };
}
