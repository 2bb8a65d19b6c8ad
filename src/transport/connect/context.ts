// Values the HTTP layer hands to Connect handlers.
import { createContextKey } from "@connectrpc/connect";
import type { Access } from "../../rpc/methodPolicy.js";

export const accessKey = createContextKey<Access>({ kind: "public" }, { description: "caller's access level" });
export const clientIpKey = createContextKey<string>("unknown", { description: "caller's IP (X-Forwarded-For from trusted proxies)" });
