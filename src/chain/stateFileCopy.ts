// anvil rewrites its --state file in place (truncate, then write) every few seconds: a node killed in that
// window (OOM, power loss, SIGKILL to the whole group) leaves a file it then refuses to start on, and the dev
// chain with it. This keeps a second copy that is always whole (anvil_dumpState, written to a temporary file,
// fsynced and renamed over the copy) and puts it in place of a torn file before the next start. The copy can
// be a few seconds behind (goodCopyIntervalMs).
import { constants, existsSync } from "node:fs";
import { copyFile, open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";

const gunzipAsync = promisify(gunzip);

/** anvil's own words when its state file does not parse. */
export const TORN_STATE = /failed to parse json file/i;

const goodCopyOf = (stateFile: string): string => `${stateFile}.good`;

/** What was done about a state file anvil would not load. */
export interface StateRestored {
  /** Where the torn file was moved (kept for a post-mortem). */
  tornAside: string;
  /** "copy": the last whole copy took its place; "fresh": there was none, the chain starts anew. */
  restored: "copy" | "fresh";
}

/** Moves a torn state file aside and puts the last whole copy (if any) in its place. */
export async function restoreStateFile(stateFile: string): Promise<StateRestored> {
  const tornAside = `${stateFile}.torn-${Date.now()}`;
  await rename(stateFile, tornAside);
  const copy = goodCopyOf(stateFile);
  if (!existsSync(copy)) return { tornAside, restored: "fresh" };
  await copyFile(copy, stateFile, constants.COPYFILE_EXCL);
  return { tornAside, restored: "copy" };
}

/** Writes the node's whole state to the copy, atomically: a crash leaves the old copy or the new one. */
export async function writeGoodCopy(nodeUrl: string, stateFile: string): Promise<void> {
  const res = await fetch(nodeUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"jsonrpc":"2.0","id":1,"method":"anvil_dumpState","params":[]}',
    signal: AbortSignal.timeout(60_000),
  });
  const { result } = (await res.json()) as { result?: string };
  if (typeof result !== "string" || !result.startsWith("0x")) throw new Error("anvil_dumpState gave no state");
  // anvil answers its state gzipped; --state loads it as plain JSON. Unzipped off the event loop.
  const json = await gunzipAsync(Buffer.from(result.slice(2), "hex"));
  const copy = goodCopyOf(stateFile);
  const tmp = `${copy}.tmp`;
  const file = await open(tmp, "w");
  try {
    await file.writeFile(json);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, copy);
  // The rename itself survives a power loss only once the directory is synced.
  const dir = await open(dirname(copy), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
