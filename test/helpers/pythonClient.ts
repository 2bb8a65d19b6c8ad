// The Python gRPC client of docs/CLIENTS.md (test/clients/python_client.py): stubs generated from proto/ with
// Debian's protoc and grpc_python_plugin, run with python3-grpcio (.ci/run installs them).
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PYTHON = "/usr/bin/python3";

export const pythonGrpcReady = (() => {
  if (!existsSync("/usr/bin/protoc") || !existsSync("/usr/bin/grpc_python_plugin")) return false;
  try {
    execFileSync(PYTHON, ["-c", "import grpc, google.protobuf"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** What python_client.py printed: one object with each call's result. */
export interface PythonClientRun {
  chainId: string;
  blockNumberJson: string;
  heads: number[];
  write: { hash: string; queueId: string; status: string };
  badKey: string;
}

/** Generates the stubs and runs the client against `target` (host:port, h2c) with `apiKey`. */
export async function runPythonClient(target: string, apiKey: string): Promise<PythonClientRun> {
  const out = mkdtempSync(join(tmpdir(), "py-client-"));
  execFileSync("/usr/bin/protoc", [
    "-I",
    "proto",
    "-I",
    "/usr/include",
    `--python_out=${out}`,
    `--grpc_python_out=${out}`,
    "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
    "chaingateway/rpc/v1/rpc.proto",
    "chaingateway/zkt/v1/zkt.proto",
  ]);
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(PYTHON, ["test/clients/python_client.py", out, target, apiKey], { timeout: 90_000 }, (err, so, se) =>
      err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so),
    ),
  );
  return JSON.parse(stdout) as PythonClientRun;
}
