// The submission journal on SQL (PGlite or PostgreSQL).
import type { SqlClient } from "./sqlClient.js";
import type { LaneReservation, SubmissionRecord, SubmissionStatus, SubmissionStore, SubmissionUpdate } from "./submissionStore.js";

interface Row {
  queue_id: string;
  network: string;
  signer: string;
  nonce: string | number;
  hash: string;
  raw: string;
  kind: SubmissionRecord["kind"];
  status: SubmissionStatus;
  error_message: string | null;
  created_at: Date | string;
  processed_at: Date | string | null;
  idempotency_key: string | null;
}

function fromRow(r: Row): SubmissionRecord {
  return {
    queueId: r.queue_id,
    network: r.network,
    signer: r.signer,
    nonce: Number(r.nonce),
    hash: r.hash,
    raw: r.raw,
    kind: r.kind,
    status: r.status,
    createdAt: new Date(r.created_at),
    ...(r.error_message !== null ? { errorMessage: r.error_message } : {}),
    ...(r.processed_at !== null ? { processedAt: new Date(r.processed_at) } : {}),
    ...(r.idempotency_key !== null ? { idempotencyKey: r.idempotency_key } : {}),
  };
}

const COLUMNS = 12;
/**
 * How long plain status changes gather before one statement writes them all. A lane broadcasts one
 * transaction per upstream round trip, so a per-tick flush wrote one row per statement (bench).
 */
const STATUS_FLUSH_MS = 25;

/** One multi-row insert: a group commit costs one statement, not one per record. */
async function insertRecords(db: Pick<SqlClient, "query">, records: SubmissionRecord[]): Promise<void> {
  if (records.length === 0) return;
  const values = records.map((_, i) => `(${Array.from({ length: COLUMNS }, (_, j) => `$${i * COLUMNS + j + 1}`).join(", ")})`).join(", ");
  await db.query(
    `insert into submissions (queue_id, network, signer, nonce, hash, raw, kind, status, error_message, created_at, processed_at, idempotency_key) values ${values}`,
    records.flatMap((r) => [r.queueId, r.network, r.signer, r.nonce, r.hash, r.raw, r.kind, r.status, r.errorMessage ?? null, r.createdAt, r.processedAt ?? null, r.idempotencyKey ?? null]),
  );
}

async function insertRecord(db: Pick<SqlClient, "query">, r: SubmissionRecord): Promise<void> {
  await insertRecords(db, [r]);
}

export class SqlSubmissionStore implements SubmissionStore {
  constructor(private readonly db: SqlClient) {}

  async reserveAndInsertLanes(network: string, lanes: LaneReservation[]): Promise<SubmissionRecord[][]> {
    // Lane rows are locked in signer order, so replicas committing overlapping lanes never deadlock.
    const order = lanes.map((_, i) => i).sort((a, b) => (lanes[a]!.signer < lanes[b]!.signer ? -1 : lanes[a]!.signer > lanes[b]!.signer ? 1 : 0));
    return this.db.transaction(async (tx) => {
      const firsts: number[] = new Array(lanes.length);
      for (const i of order) {
        const { signer, chainPending, count } = lanes[i]!;
        // One upsert: a new lane starts at the chain's pending nonce; an existing one never goes below it. The
        // row lock serialises this lane across replicas until commit; a failed build rolls the nonces back.
        const [row] = await tx.query<{ first: string | number }>(
          `insert into nonce_lanes (network, signer, next_nonce) values ($1, $2, $3::bigint + $4::bigint)
           on conflict (network, signer) do update set next_nonce = greatest(nonce_lanes.next_nonce, $3::bigint) + $4::bigint
           returning next_nonce - $4::bigint as first`,
          [network, signer, chainPending, count],
        );
        firsts[i] = Number(row!.first);
      }
      const built = await Promise.all(lanes.map((l, i) => l.build(Array.from({ length: l.count }, (_, j) => firsts[i]! + j))));
      await insertRecords(tx, built.flat());
      return built;
    });
  }

  async insert(r: SubmissionRecord): Promise<void> {
    await insertRecord(this.db, r);
  }

  async listUnfinished(network: string, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    const rows = await this.db.query<Row>(
      "select * from submissions where network = $1 and status in ('pending', 'processing') and created_at < coalesce($3::timestamptz, 'infinity'::timestamptz) order by signer, nonce limit $2",
      [network, limit, createdBefore ?? null],
    );
    return rows.map(fromRow);
  }

  async getByHash(network: string, hash: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.db.query<Row>("select * from submissions where network = $1 and hash = $2 order by created_at limit 1", [network, hash]);
    return row ? fromRow(row) : undefined;
  }

  async update(queueId: string, u: SubmissionUpdate): Promise<void> {
    // Plain status changes (broadcast → processing, mined → completed) are the bulk of journal writes:
    // coalesce those issued within a few milliseconds into one statement per status.
    if (u.errorMessage === undefined && u.hash === undefined && u.raw === undefined && u.status !== undefined) return this.coalesced(queueId, u.status, u.processedAt);
    await this.db.query(
      `update submissions set status = coalesce($2, status), error_message = coalesce($3, error_message), processed_at = coalesce($4, processed_at),
         hash = coalesce($5, hash), raw = coalesce($6, raw) where queue_id = $1`,
      [queueId, u.status ?? null, u.errorMessage ?? null, u.processedAt ?? null, u.hash ?? null, u.raw ?? null],
    );
  }

  private pendingStatus = new Map<string, { ids: string[]; processedAt: Date | null; done: Promise<void> }>();

  private coalesced(queueId: string, status: SubmissionStatus, processedAt: Date | undefined): Promise<void> {
    const key = `${status}|${processedAt ? "at" : ""}`;
    let group = this.pendingStatus.get(key);
    if (!group) {
      const ids: string[] = [];
      const at = processedAt ?? null;
      // "processing" only ever follows "pending": flushed late, or racing on another pooled connection, it
      // must not undo a "completed" written meanwhile.
      const guard = status === "processing" ? " and status = 'pending'" : "";
      const done = new Promise<void>((resolve, reject) =>
        setTimeout(() => {
          this.pendingStatus.delete(key);
          this.db
            .query(`update submissions set status = $2, processed_at = coalesce($3, processed_at) where queue_id = any($1::text[])${guard}`, [ids, status, at])
            .then(() => resolve(), reject);
        }, STATUS_FLUSH_MS),
      );
      group = { ids, processedAt: at, done };
      this.pendingStatus.set(key, group);
    }
    group.ids.push(queueId);
    return group.done;
  }

  async get(queueId: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.db.query<Row>("select * from submissions where queue_id = $1", [queueId]);
    return row ? fromRow(row) : undefined;
  }

  /** Submissions signed by `signer` since `since`, on any network (per-key usage). */
  async countBySignerSince(signer: string, since: Date): Promise<number> {
    const [row] = await this.db.query<{ n: string | number }>("select count(*) as n from submissions where signer = $1 and created_at >= $2 and kind <> 'refill'", [signer, since]);
    return Number(row?.n ?? 0);
  }

  async listByStatus(network: string, status: SubmissionStatus, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    const rows = await this.db.query<Row>(
      "select * from submissions where network = $1 and status = $2 and created_at < coalesce($4::timestamptz, 'infinity'::timestamptz) order by created_at limit $3",
      [network, status, limit, createdBefore ?? null],
    );
    return rows.map(fromRow);
  }
}
