// deploy/nginx.conf, rendered with local replicas, local ports and a private prefix (so it runs unprivileged,
// beside others), and started; undefined where nginx is not installed (.ci/run installs it).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./anvilProcess.js";
import { until } from "./until.js";

export const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));

export interface LoadBalancer {
  child: ChildProcess;
  /** The HTTP/1.1 port: JSON-RPC, ZKT, Connect, WebSocket. */
  url: string;
  /** The h2c port: gRPC. */
  grpcTarget: string;
}

export async function startNginx(dir: string, replicas: number[]): Promise<LoadBalancer> {
  const [http, grpc] = [await freePort(), await freePort()];
  const prefix = join(dir, "nginx");
  mkdirSync(prefix, { recursive: true });
  const conf = readFileSync("deploy/nginx.conf", "utf8")
    .replaceAll(/server gateway-1:8545([^;]*);\s*server gateway-2:8545([^;]*);/g, replicas.map((p) => `server 127.0.0.1:${p}$1;`).join("\n    "))
    .replace("listen 8545;", `listen 127.0.0.1:${http};`)
    .replace("listen 50051 http2;", `listen 127.0.0.1:${grpc} http2;`)
    .replace("worker_processes auto;", `worker_processes 1;\nerror_log ${prefix}/error.log;\npid ${prefix}/nginx.pid;`)
    .replace("http {", `http {\n  access_log off;\n  client_body_temp_path ${prefix}/body;\n  proxy_temp_path ${prefix}/proxy;`);
  if (conf.includes("gateway-1:8545") || !conf.includes(`127.0.0.1:${replicas[1]}`) || !conf.includes(`127.0.0.1:${grpc} http2`))
    throw new Error("deploy/nginx.conf no longer has the two gateway-N:8545 servers and the two listeners this helper renders");
  const file = join(prefix, "nginx.conf");
  writeFileSync(file, conf);
  const child = spawn(NGINX!, ["-p", prefix, "-c", file, "-g", "daemon off;"], { stdio: "ignore" });
  const url = `http://127.0.0.1:${http}`;
  await until(async () => (await fetch(url + "/healthz").catch(() => undefined))?.status === 200, 10_000);
  return { child, url, grpcTarget: `127.0.0.1:${grpc}` };
}
