// The admin API as an operator's client calls it: Connect over HTTP/1.1 with `authorization: Bearer <token>`.
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AdminService } from "../../gen/chaingateway/admin/v1/admin_pb.js";

export function adminClient(baseUrl: string, token: string): Client<typeof AdminService> {
  return createClient(
    AdminService,
    createConnectTransport({
      baseUrl,
      httpVersion: "1.1",
      interceptors: [
        (next) => (req) => {
          req.header.set("authorization", `Bearer ${token}`);
          return next(req);
        },
      ],
    }),
  );
}
