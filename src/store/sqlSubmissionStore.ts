// The submission journal on PostgreSQL (DATABASE_URL), shared by replicas.
import type { SqlClient } from "./sqlClient.js";
import type { LaneReservation, SubmissionRecord, SubmissionStatus, SubmissionStore, SubmissionUpdate } from "./submissionStore.js";
import { StatusBatcher } from "./statusBatcher.js";
import { fromRow, type SubmissionRow as Row } from "./submissionRow.js";
import { EVENT_KINDS, eventOfStatus } from "./webhookStore.js";

/**
 * After a `changed` CTE of the status update: one delivery per endpoint of the changed writes' key that wants the
 * event (parameter $n, and $n+1 as ",event,"), and one to a changed write's own callback (once: its dedupe
 * name, which the callback's attach may have written first). Outbox rows and status change are one statement.
 */
const outboxFromChanged = (n: number): string => `,
     signed as (
       insert into webhook_deliveries (webhook_id, event, queue_id, error_message)
       select w.id, $${n}, c.queue_id, c.error_message from changed c join webhooks w on w.signer = c.signer
       where w.disabled_at is null and position($${n + 1} in w.events) > 0 and c.kind in ${EVENT_KINDS}
         and left(c.network, length(w.network) + 1) = w.network || ':'
       returning webhook_id),
     called as (
       insert into webhook_deliveries (webhook_id, event, queue_id, error_message, url, dedupe)
       select b.webhook_id, $${n}, c.queue_id, c.error_message, b.url, 'cb:' || c.queue_id || ':' || $${n}
       from changed c join write_callbacks b on b.queue_id = c.queue_id
       on conflict (webhook_id, dedupe) where dedupe is not null do nothing
       returning webhook_id)
     select webhook_id from signed union all select webhook_id from called`;

/**
 * Records as one array per column, unnested by the database: the statement's text is the same for any
 * number of records (a database parses and plans each new text anew, and 12 parameters per record would
 * make that cost grow with the batch). `prefix` may add a data-modifying CTE that runs in the same statement.
 */
const INSERT_RECORDS = `insert into submissions
       (queue_id, network, signer, nonce, hash, raw, kind, status, error_message, created_at, processed_at, idempotency_key)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],
       $9::text[], $10::timestamptz[], $11::timestamptz[], $12::text[])`;

function recordColumns(records: SubmissionRecord[]): unknown[] {
  return [
    records.map((r) => r.queueId),
    records.map((r) => r.network),
    records.map((r) => r.signer),
    records.map((r) => r.nonce),
    records.map((r) => r.hash),
    records.map((r) => r.raw),
    records.map((r) => r.kind),
    records.map((r) => r.status),
    records.map((r) => r.errorMessage ?? null),
    records.map((r) => r.createdAt),
    records.map((r) => r.processedAt ?? null),
    records.map((r) => r.idempotencyKey ?? null),
  ];
}

async function insertRecords(db: Pick<SqlClient, "query">, records: SubmissionRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.query(INSERT_RECORDS, recordColumns(records));
}

export class SqlSubmissionStore implements SubmissionStore {
  /** "processing" only ever follows "pending": flushed late, or racing on another pooled connection, it must not undo a "completed" written meanwhile. */
  private readonly statuses = new StatusBatcher(async (status, ids, at) => {
    const event = eventOfStatus(status);
    if (!event) {
      await this.db.query(
        "update submissions set status = $2, processed_at = coalesce($3, processed_at) where queue_id = any($1::text[])" +
          (status === "processing" ? " and status = 'pending'" : ""),
        [ids, status, at],
      );
      return;
    }
    // The webhook outbox in the same statement as the status change: both commit, or neither.
    const rows = await this.db.query(
      `with changed as (
         update submissions set status = $2, processed_at = coalesce($3, processed_at) where queue_id = any($1::text[])
         returning queue_id, network, signer, kind, error_message)${outboxFromChanged(4)}`,
      [ids, status, at, event, `,${event},`],
    );
    if (rows.length > 0) for (const f of this.outboxListeners) f();
  });

  /** Told after a status change wrote webhook deliveries (each network's dispatcher then looks at once). */
  readonly outboxListeners = new Set<() => void>();

  constructor(private readonly db: SqlClient) {}

  async reserveAndInsertLanes(network: string, lanes: LaneReservation[]): Promise<SubmissionRecord[][]> {
    return this.db.transaction(async (tx) => {
      // One upsert for every lane: a new lane starts at the chain's pending nonce; an existing one never goes
      // below it. `reserved` carries each lane's count into the conflict branch. Rows are taken, and so locked,
      // in signer order (replicas committing overlapping lanes never deadlock); the locks hold until commit,
      // and a failed build rolls the nonces back.
      const rows = await tx.query<{ signer: string; first: string | number }>(
        `insert into nonce_lanes (network, signer, next_nonce, reserved)
           select $1, s, p + c, c from unnest($2::text[], $3::bigint[], $4::bigint[]) as u(s, p, c) order by s
         on conflict (network, signer) do update
           set next_nonce = greatest(nonce_lanes.next_nonce, excluded.next_nonce - excluded.reserved) + excluded.reserved, reserved = excluded.reserved
         returning signer, next_nonce - reserved as first`,
        [network, lanes.map((l) => l.signer), lanes.map((l) => l.chainPending), lanes.map((l) => l.count)],
      );
      const firstOf = new Map(rows.map((r) => [r.signer, Number(r.first)]));
      const built = await Promise.all(lanes.map((l) => l.build(Array.from({ length: l.count }, (_, j) => firstOf.get(l.signer)! + j))));
      await insertRecords(tx, built.flat());
      return built;
    });
  }

  async moveToNextNonce(
    queueId: string,
    chainPending: number,
    build: (nonce: number) => Promise<Pick<SubmissionRecord, "hash" | "raw">>,
  ): Promise<SubmissionRecord> {
    this.statuses.forget(queueId);
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<Row>("select * from submissions where queue_id = $1 for update", [queueId]);
      if (!row) throw new Error(`no submission ${queueId}`);
      const rec = fromRow(row);
      // The same lane upsert as a group commit of one: replicas never hand out this nonce again.
      const [lane] = await tx.query<{ first: string | number }>(
        `insert into nonce_lanes (network, signer, next_nonce, reserved) values ($1, $2, $3::bigint + 1, 1)
         on conflict (network, signer) do update
           set next_nonce = greatest(nonce_lanes.next_nonce, excluded.next_nonce - 1) + 1, reserved = 1
         returning next_nonce - 1 as first`,
        [rec.network, rec.signer, chainPending],
      );
      const nonce = Number(lane!.first);
      const { hash, raw } = await build(nonce);
      await tx.query(
        "update submissions set nonce = $2, hash = $3, raw = $4, status = 'pending', error_message = null, processed_at = null where queue_id = $1",
        [queueId, nonce, hash, raw],
      );
      const { errorMessage: _e, processedAt: _p, ...rest } = rec;
      return { ...rest, nonce, hash, raw, status: "pending" as const };
    });
  }

  async insert(r: SubmissionRecord): Promise<void> {
    await insertRecords(this.db, [r]);
  }

  async listUnfinished(network: string, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    const rows = await this.db.query<Row>(
      "select * from submissions where network = $1 and status in ('pending', 'processing') and created_at " +
        "< coalesce($3::timestamptz, 'infinity'::timestamptz) order by signer, nonce limit $2",
      [network, limit, createdBefore ?? null],
    );
    return rows.map(fromRow);
  }

  async getByIdempotencyKey(key: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.db.query<Row>("select * from submissions where idempotency_key = $1", [key]);
    return row ? fromRow(row) : undefined;
  }

  async getRawByHash(network: string, hash: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.db.query<Row>("select * from submissions where network = $1 and hash = $2 and kind = 'raw' order by created_at limit 1", [
      network,
      hash,
    ]);
    return row ? fromRow(row) : undefined;
  }

  async update(queueId: string, u: SubmissionUpdate, options: { urgent?: boolean } = {}): Promise<void> {
    // Plain status changes (broadcast → processing, mined → completed) are the bulk of journal writes:
    // coalesce those issued within a few milliseconds into one statement per status.
    if (u.errorMessage === undefined && u.hash === undefined && u.raw === undefined && u.status !== undefined)
      return this.statuses.mark(queueId, u.status, u.processedAt, options.urgent);
    if (u.status !== undefined && u.status !== "processing") this.statuses.forget(queueId);
    const event = u.status !== undefined ? eventOfStatus(u.status) : undefined;
    const update = `update submissions set status = coalesce($2, status), error_message = coalesce($3, error_message), processed_at = coalesce($4, processed_at),
         hash = coalesce($5, hash), raw = coalesce($6, raw) where queue_id = $1`;
    const params = [queueId, u.status ?? null, u.errorMessage ?? null, u.processedAt ?? null, u.hash ?? null, u.raw ?? null];
    if (!event) {
      await this.db.query(update, params);
      return;
    }
    const rows = await this.db.query(`with changed as (${update} returning queue_id, network, signer, kind, error_message)${outboxFromChanged(7)}`, [
      ...params,
      event,
      `,${event},`,
    ]);
    if (rows.length > 0) for (const f of this.outboxListeners) f();
  }

  /** Writes what is batched (the client is its owner's to close). */
  close(): Promise<void> {
    return this.statuses.flushAll();
  }

  async pinnedGenesis(network: string): Promise<string | undefined> {
    const rows = await this.db.query<{ value: string }>("select value from journal_meta where key = $1", [`genesis:${network}`]);
    return rows[0]?.value;
  }

  async pinGenesis(network: string, hash: string): Promise<void> {
    await this.db.query("insert into journal_meta (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value", [
      `genesis:${network}`,
      hash,
    ]);
  }

  async prune(before: Date): Promise<number> {
    // Age is counted from creation (a write finishes seconds after it), so the status index (network, status,
    // created_at) finds the rows: no scan of the journal. Its networks come from the same index, one probe
    // each (PostgreSQL has no skip scan; the recursive query is the usual stand-in).
    const networks = await this.db.query<{ network: string }>(
      `with recursive n as (
         select min(network) as network from submissions
         union all select (select min(network) from submissions where network > n.network) from n where n.network is not null
       ) select network from n where network is not null`,
    );
    let total = 0;
    for (const { network } of networks) {
      for (const status of ["completed", "error"] as const) {
        // In slices, so a first prune of a long history holds no lock (nor PGlite) for long.
        for (;;) {
          const rows = await this.db.query(
            `delete from submissions where queue_id in (
               select queue_id from submissions where network = $1 and status = $2 and created_at < $3 limit 5000
             ) returning 1`,
            [network, status, before],
          );
          total += rows.length;
          if (rows.length < 5000) break;
        }
      }
    }
    return total;
  }

  async get(queueId: string): Promise<SubmissionRecord | undefined> {
    const [row] = await this.db.query<Row>("select * from submissions where queue_id = $1", [queueId]);
    return row ? this.statuses.overlay(fromRow(row)) : undefined;
  }

  /** Submissions signed by `signer` since `since`, on any network (per-key usage). */
  async countBySignerSince(signer: string, since: Date): Promise<number> {
    const [row] = await this.db.query<{ n: string | number }>(
      "select count(*) as n from submissions where signer = $1 and created_at >= $2 and kind <> 'refill'",
      [signer, since],
    );
    return Number(row?.n ?? 0);
  }

  async listByStatus(network: string, status: SubmissionStatus, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    const rows = await this.db.query<Row>(
      "select * from submissions where network = $1 and status = $2 and created_at < " +
        "coalesce($4::timestamptz, 'infinity'::timestamptz) order by created_at limit $3",
      [network, status, limit, createdBefore ?? null],
    );
    return rows.map(fromRow);
  }

  async laneHeads(network: string): Promise<{ signer: string; next: number }[]> {
    const rows = await this.db.query<{ signer: string; next_nonce: string | number }>("select signer, next_nonce from nonce_lanes where network = $1", [
      network,
    ]);
    return rows.map((r) => ({ signer: r.signer, next: Number(r.next_nonce) }));
  }

  async listNewest(network: string, status: SubmissionStatus, limit: number, atOrBefore?: Date): Promise<SubmissionRecord[]> {
    const rows = await this.db.query<Row>(
      "select * from submissions where network = $1 and status = $2 and created_at <= $3 order by created_at desc limit $4",
      [network, status, atOrBefore ?? new Date(8.64e15), limit],
    );
    return rows.map(fromRow);
  }
}
