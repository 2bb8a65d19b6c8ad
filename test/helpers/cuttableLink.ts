// A TCP link to a service (PostgreSQL, Redis) that a test can cut and mend: cut() resets every connection
// through it and refuses new ones, as a database killed with `pg_ctl stop -m immediate` does; mend() takes
// connections again on the same port. The shared service itself is never stopped (other suites use it).
import net from "node:net";

export interface CuttableLink {
  port: number;
  cut(): Promise<void>;
  mend(): Promise<void>;
  close(): Promise<void>;
}

export async function startCuttableLink(target: { host: string; port: number }, port = 0): Promise<CuttableLink> {
  const open = new Set<net.Socket>();
  const serve = (): net.Server =>
    net.createServer((client) => {
      const upstream = net.connect(target);
      open.add(client);
      open.add(upstream);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        open.delete(client);
        open.delete(upstream);
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
      client.pipe(upstream).pipe(client);
    });
  const listen = (server: net.Server, on: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(on, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port));
    });
  let server: net.Server | undefined = serve();
  const bound = await listen(server, port);
  const cut = async (): Promise<void> => {
    const s = server;
    server = undefined;
    const closed = s ? new Promise<void>((r) => s.close(() => r())) : Promise.resolve();
    for (const sock of open) sock.resetAndDestroy();
    open.clear();
    await closed;
  };
  return {
    port: bound,
    cut,
    async mend() {
      if (server) return;
      server = serve();
      await listen(server, bound);
    },
    close: cut,
  };
}
