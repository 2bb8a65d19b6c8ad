// What a delivery says: the `data` of a transaction.completed or transaction.error event, read when it is
// sent (the outbox row names the write; its journal record and receipt say the rest), or a log event's own.
import { GatewayError, type JsonValue } from "../errors.js";
import type { SubmissionStore } from "../store/submissionStore.js";
import type { DeliveryRow } from "../store/webhookStore.js";
import { Interface } from "ethers";
import { decodeLogs, type RawLog } from "../abi/decodeLogs.js";

async function eventsOf(sources: EventSources, queueId: string): Promise<Interface> {
  const abi = await sources.abiOf(queueId);
  if (abi === undefined) return NO_EVENTS;
  try {
    return new Interface(abi);
  } catch {
    return NO_EVENTS;
  }
}

export interface EventSources {
  journal: Pick<SubmissionStore, "get">;
  /** The write's contract events (ABI JSON), when they were kept. */
  abiOf(queueId: string): Promise<string | undefined>;
  /** A node read (the network's pool). */
  call(method: string, params: JsonValue[]): Promise<JsonValue>;
}

type Receipt = { blockNumber: string; blockHash: string; gasUsed: string; status?: string; contractAddress?: string | null; logs?: RawLog[] };

const NO_EVENTS = new Interface([]);

export async function describeDelivery(d: DeliveryRow, sources: EventSources): Promise<JsonValue> {
  if (d.payload !== null) return JSON.parse(d.payload) as JsonValue;
  if (d.queueId === null) return {};
  const rec = await sources.journal.get(d.queueId);
  const base = { queueId: d.queueId, hash: rec?.hash ?? null, kind: rec?.kind ?? null };
  if (d.event === "transaction.error") return { ...base, status: "error", reason: d.errorMessage ?? rec?.errorMessage ?? "" };
  const receipt = rec ? ((await sources.call("eth_getTransactionReceipt", [rec.hash])) as Receipt | null) : null;
  // Completed but not found: the node went back meanwhile (the write is being sent again); asked again later.
  if (!receipt) throw new GatewayError("upstream_unavailable", "the transaction's receipt is not on the node (yet)");
  return {
    ...base,
    status: "completed",
    blockNumber: Number(BigInt(receipt.blockNumber)),
    blockHash: receipt.blockHash,
    gasUsed: BigInt(receipt.gasUsed).toString(),
    succeeded: receipt.status === undefined ? true : receipt.status === "0x1",
    ...(receipt.contractAddress ? { contractAddress: receipt.contractAddress } : {}),
    // Decoded where the write's contract events were kept (a contract write or deploy by a key with somewhere to
    // send them): each log's event and named arguments; null where not known.
    logs: decodeLogs(receipt.logs ?? [], await eventsOf(sources, d.queueId)) as unknown as JsonValue,
  };
}
