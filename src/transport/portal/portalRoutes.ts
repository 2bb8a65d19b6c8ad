// Self-service API keys: POST /portal/keys issues a free key (shown once) with its wallet address; how many
// an address may have is KeyIssuer's to decide.
import { GatewayError } from "../../errors.js";
import { json, type HttpAnswer, type RestRoute } from "../http/restRouter.js";
import { portalPage } from "./portalPage.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";

/** What the portal asks of the key issuer (keys/keyIssuer.ts decides who may have a key). */
export interface IssuesKeys {
  readonly enabled: boolean;
  issue(
    clientIp: string,
    label: string | undefined,
  ): Promise<{ apiKey: string; info: { id: string; prefix: string; label: string; walletAddress: string; createdAt: Date } }>;
}

export interface PortalRouteOptions {
  issuer: IssuesKeys;
  /** Base addresses of every network, shown with the new key. */
  baseUrls: () => Record<string, string>;
  /** Web origins other than the portal's own that may mint keys (CORS); none by default. */
  keyOrigins: ReadonlySet<string>;
}

/** The path whose CORS is restricted to PortalRouteOptions.keyOrigins (the transports' CORS layer needs it too). */
export const KEYS_PATH = "/portal/keys";

// REST errors here take the ZKT error shape.
const renderError = (err: GatewayError): HttpAnswer => zktErrorAnswer(err);

export function portalRoutes(options: PortalRouteOptions): RestRoute[] {
  return [
    {
      method: "GET",
      pattern: /^\/portal\/?$/,
      renderError,
      handle: async () => ({ status: 200, body: portalPage(options.baseUrls(), options.issuer.enabled), contentType: "text/html; charset=utf-8" }),
    },
    {
      method: "POST",
      pattern: /^\/portal\/keys$/,
      renderError,
      cors: options.keyOrigins,
      async handle(req) {
        const text = await req.body();
        let body: unknown = {};
        if (text.trim() !== "") {
          try {
            body = JSON.parse(text);
          } catch {
            throw new GatewayError("validation", 'the body must be JSON, e.g. {"label": "my app"}, or empty');
          }
        }
        if (typeof body !== "object" || body === null || Array.isArray(body)) throw new GatewayError("validation", "the body must be a JSON object");
        const { label, ...rest } = body as { label?: unknown };
        if (Object.keys(rest).length > 0) throw new GatewayError("validation", `unknown field "${Object.keys(rest)[0]}" (only label is accepted)`);
        if (label !== undefined && typeof label !== "string") throw new GatewayError("validation", "label must be a string");
        const { apiKey, info } = await options.issuer.issue(req.clientIp, label);
        const urls = options.baseUrls();
        return json(201, {
          success: true,
          apiKey,
          note: "Store this key now: it is shown only once.",
          id: info.id,
          prefix: info.prefix,
          label: info.label,
          walletAddress: info.walletAddress,
          createdAt: info.createdAt.toISOString(),
          endpoints: Object.fromEntries(Object.entries(urls).map(([name, url]) => [name, { jsonRpc: `${url}/zgt/${apiKey}`, zkt: `${url}/zkt/${apiKey}` }])),
        });
      },
    },
  ];
}
