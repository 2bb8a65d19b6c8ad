// Connect/gRPC callers present an API key as `authorization: Bearer <key>`; no header means public access.
import type { Interceptor } from "@connectrpc/connect";
import { GatewayError } from "../../errors.js";
import type { Authenticate } from "../jsonrpc/jsonRpcRoutes.js";
import { accessKey } from "./context.js";

export function authInterceptor(authenticate: Authenticate): Interceptor {
  return (next) => async (req) => {
    const header = req.header.get("authorization");
    if (header !== null) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw new GatewayError("unauthorized", 'the authorization header must be "Bearer <API_KEY>"');
      req.contextValues.set(accessKey, await authenticate(m[1]!));
    }
    return next(req);
  };
}
