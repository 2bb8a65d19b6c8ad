// The request/response pair Node's http and http2 servers both hand us, as connect-node types them
// (its index does not export these names, so derive them from the adapter's signature).
import type { connectNodeAdapter } from "@connectrpc/connect-node";

export type NodeHandlerFn = NonNullable<Parameters<typeof connectNodeAdapter>[0]["fallback"]>;
export type NodeServerRequest = Parameters<NodeHandlerFn>[0];
export type NodeServerResponse = Parameters<NodeHandlerFn>[1];
