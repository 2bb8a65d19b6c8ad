// /zgt/<API_KEY>/webhooks: WebhookService's REST twin. Translation only: each path calls the guarded handler in
// process (the same policy as Connect), bodies and answers are plain JSON, errors ZKT-style.
import { create, type DescMessage, type DescMethodUnary, type MessageShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Delivery,
  DeleteWebhookRequestSchema,
  GetCallbackSecretRequestSchema,
  ListDeliveriesRequestSchema,
  ListWebhooksRequestSchema,
  RegisterWebhookRequestSchema,
  ReplayDeliveryRequestSchema,
  RotateCallbackSecretRequestSchema,
  RotateWebhookSecretRequestSchema,
  type Webhook,
  WebhookService,
} from "../../../gen/chaingateway/webhooks/v1/webhooks_pb.js";
import { GatewayError } from "../../errors.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import { callInProcess } from "../http/callInProcess.js";
import { json, type RestRequest, type RestRoute } from "../http/restRouter.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";

const KEY = "/zgt/([^/]+)/webhooks";
const ID = "([A-Za-z0-9_-]{1,64})";

export interface WebhookRouteOptions {
  webhooks: ServiceImpl<typeof WebhookService>;
  admission: EdgeAdmission;
}

export function webhookRoutes(options: WebhookRouteOptions): RestRoute[] {
  const h = options.webhooks;
  const caller = (req: RestRequest): Caller => ({ apiKey: decodeURIComponent(req.params[0] ?? ""), clientIp: req.clientIp });
  const call = async <I extends DescMessage, O extends DescMessage>(
    req: RestRequest,
    method: DescMethodUnary<I, O>,
    handler: Parameters<typeof callInProcess<I, O>>[1],
    message: MessageShape<I>,
    status: number,
    render: (answer: MessageShape<O>) => unknown,
  ) => {
    const run = callInProcess(method, handler, message, caller(req), "/zgt/{key}/webhooks");
    return json(status, render(await run.result), run.headers());
  };
  const route = (method: RestRoute["method"], path: string, handle: RestRoute["handle"]): RestRoute => ({
    method,
    pattern: new RegExp(`^${KEY}${path}$`),
    renderError: (err) => zktErrorAnswer(err),
    handle,
  });
  return [
    route("GET", "/callback-secret", (req) =>
      call(req, WebhookService.method.getCallbackSecret, h.getCallbackSecret, create(GetCallbackSecretRequestSchema, {}), 200, (a) => ({ secret: a.secret })),
    ),
    route("POST", "", async (req) => {
      let body: { url?: unknown; events?: unknown; logs?: { address?: unknown; topics?: unknown } };
      try {
        body = JSON.parse(await req.body()) as typeof body;
      } catch (err) {
        if (err instanceof GatewayError) throw err;
        body = {};
      }
      if (body === null || typeof body !== "object" || typeof body.url !== "string" || !Array.isArray(body.events)) {
        // A body too malformed to reach the handler still counts against the caller's limits.
        await options.admission.refused(caller(req));
        throw new GatewayError("validation", 'the body must be JSON: {"url": "https://…", "events": ["transaction.completed", "transaction.error"]}');
      }
      const events = body.events.filter((e): e is string => typeof e === "string");
      return call(
        req,
        WebhookService.method.registerWebhook,
        h.registerWebhook,
        create(RegisterWebhookRequestSchema, {
          url: body.url,
          events: events.length === body.events.length ? events : [""],
          ...(body.logs && typeof body.logs === "object" ? { logs: logFilterOf(body.logs) } : {}),
        }),
        201,
        (a) => ({ ...webhookJson(a.webhook), secret: a.secret }),
      );
    }),
    route("GET", "", (req) =>
      call(req, WebhookService.method.listWebhooks, h.listWebhooks, create(ListWebhooksRequestSchema, {}), 200, (a) => ({
        webhooks: a.webhooks.map(webhookJson),
      })),
    ),
    route("DELETE", `/${ID}`, (req) =>
      call(req, WebhookService.method.deleteWebhook, h.deleteWebhook, create(DeleteWebhookRequestSchema, { id: req.params[1] ?? "" }), 200, () => ({
        deleted: true,
      })),
    ),
    route("GET", `/${ID}/deliveries`, (req) =>
      call(req, WebhookService.method.listDeliveries, h.listDeliveries, create(ListDeliveriesRequestSchema, { webhookId: req.params[1] ?? "" }), 200, (a) => ({
        deliveries: a.deliveries.map(deliveryJson),
      })),
    ),
    route("POST", `/${ID}/deliveries/${ID}/replay`, (req) =>
      call(
        req,
        WebhookService.method.replayDelivery,
        h.replayDelivery,
        create(ReplayDeliveryRequestSchema, { webhookId: req.params[1] ?? "", deliveryId: req.params[2] ?? "" }),
        200,
        (a) => ({ delivery: a.delivery ? deliveryJson(a.delivery) : null }),
      ),
    ),
    route("POST", "/callback-secret/rotate", (req) =>
      call(req, WebhookService.method.rotateCallbackSecret, h.rotateCallbackSecret, create(RotateCallbackSecretRequestSchema, {}), 200, rotated),
    ),
    route("POST", `/${ID}/rotate-secret`, (req) =>
      call(
        req,
        WebhookService.method.rotateWebhookSecret,
        h.rotateWebhookSecret,
        create(RotateWebhookSecretRequestSchema, { id: req.params[1] ?? "" }),
        200,
        rotated,
      ),
    ),
  ];
}

const rotated = (a: { secret: string; previousValidUntil: string }) => ({ secret: a.secret, previousValidUntil: a.previousValidUntil });

/** The JSON filter ({address: one or a list, topics: per position one, a list, or null}) as the message. */
function logFilterOf(logs: { address?: unknown; topics?: unknown }) {
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).map(String);
  return {
    addresses: strings(logs.address),
    topics: (Array.isArray(logs.topics) ? logs.topics : []).map((t: unknown) => ({ anyOf: strings(t) })),
  };
}

function webhookJson(w: Webhook | undefined): Record<string, unknown> {
  if (!w) return {};
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    ...(w.logs ? { logs: { address: w.logs.addresses, topics: w.logs.topics.map((t) => (t.anyOf.length > 0 ? t.anyOf : null)) } } : {}),
    createdAt: w.createdAt,
    disabledAt: w.disabledAt || null,
    disabledReason: w.disabledReason || null,
  };
}

function deliveryJson(d: Delivery): Record<string, unknown> {
  return {
    id: d.id,
    event: d.event,
    queueId: d.queueId || null,
    status: d.status,
    attempts: d.attempts,
    lastStatus: d.lastStatus || null,
    lastError: d.lastError || null,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt || null,
  };
}
