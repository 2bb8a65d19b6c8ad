// OpenTelemetry traces, off and free unless an OTLP endpoint is configured (the standard
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). On, a caller's W3C
// `traceparent` (HTTP, WebSocket upgrade, Connect/gRPC metadata) is continued; the edge, the policy, the
// handler, every upstream call (its `traceparent` sent on to the node) and the sequencer's journal and
// broadcast are spans, exported over OTLP/HTTP in batches. Off, every helper here is one boolean test.
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { hostname } from "node:os";
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, type Sampler, SamplingDecision, TracerProvider } from "@opentelemetry/sdk-trace";
import { type Attributes, type Context, context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import packageJson from "../../package.json" with { type: "json" };

/** Whether spans are made at all (checked first on every hot path). */
export let tracingOn = false;
let provider: TracerProvider | undefined;

const tracer = () => trace.getTracer("chain-gateway");

/** Header getter for the propagator: Node's header objects (string or string[] values). */
const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const v = carrier[key];
    return Array.isArray(v) ? (v as string[]) : typeof v === "string" ? v : undefined;
  },
};

/**
 * A trace starts only at a request (a SERVER span): background work with no request (head polls, probes,
 * the sequencer's passes) made ~150 root traces a minute on an idle gateway. Its spans inside a request's
 * trace are kept (parent-based). OTEL_TRACES_SAMPLER=always_on traces background work too.
 */
const requestsOnly: Sampler = {
  shouldSample: (_ctx, _traceId, _name, kind) => ({ decision: kind === SpanKind.SERVER ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD }),
  toString: () => "RequestsOnly",
};

/** The resource: service name, version and this process as an instance (OTEL_RESOURCE_ATTRIBUTES adds to it). */
function resourceAttributes(env: NodeJS.ProcessEnv): Attributes {
  const extra = Object.fromEntries(
    (env.OTEL_RESOURCE_ATTRIBUTES ?? "")
      .split(",")
      .map((kv) => kv.split("=").map((s) => decodeURIComponent(s.trim())))
      .filter((kv): kv is [string, string] => kv.length === 2 && kv[0] !== ""),
  );
  return {
    "service.version": packageJson.version,
    "service.instance.id": `${hostname()}:${process.pid}`,
    "host.name": hostname(),
    ...extra,
    "service.name": env.OTEL_SERVICE_NAME ?? extra["service.name"] ?? "chain-gateway",
  };
}

/** Starts exporting when the environment names an OTLP endpoint; a no-op (and nothing loaded into use) otherwise. */
export function startTracing(env: NodeJS.ProcessEnv = process.env): { shutdown(): Promise<void> } {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (!url || tracingOn) return { shutdown: async () => undefined };
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  provider = new TracerProvider({
    resource: resourceFromAttributes(resourceAttributes(env)),
    sampler: new ParentBasedSampler({ root: env.OTEL_TRACES_SAMPLER === "always_on" ? new AlwaysOnSampler() : requestsOnly }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }), scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY ?? 1_000) })],
  });
  trace.setGlobalTracerProvider(provider);
  tracingOn = true;
  return {
    async shutdown() {
      tracingOn = false;
      await provider?.shutdown().catch(() => undefined);
      provider = undefined;
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The context a caller's `traceparent` (in these headers or metadata) names; the current one without it. */
export function callerContext(headers: Record<string, unknown>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
}

/**
 * Runs `fn` in a new span (a child of `parent`, else of the current context) and ends it when `fn` settles:
 * at once or, for a promise, when it does. Errors mark the span and are rethrown.
 */
export function inSpan<T>(name: string, kind: SpanKind, fn: (span: Span) => T, parent?: Context, attributes?: Attributes): T {
  const ctx = parent ?? context.active();
  const span = tracer().startSpan(name, { kind, ...(attributes ? { attributes } : {}) }, ctx);
  const failed = (err: unknown): never => {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
    span.end();
    throw err;
  };
  let out: T;
  try {
    out = context.with(trace.setSpan(ctx, span), () => fn(span));
  } catch (err) {
    return failed(err);
  }
  if (out instanceof Promise)
    return out.then((v) => {
      span.end();
      return v;
    }, failed) as T;
  span.end();
  return out;
}

/** The `traceparent` to send on with a request made in the current context (undefined when none). */
export function outgoingTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

export { SpanKind };
