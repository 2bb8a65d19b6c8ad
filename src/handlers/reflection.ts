// gRPC server reflection (v1 and v1alpha), so grpcurl and `buf curl` find the services without proto files:
// the service list, and any file (with its dependencies) by name or by a symbol it defines, as serialized
// FileDescriptorProtos taken from the generated code. Schema only: it reaches no core. Each message asked is
// a request under the policy table's ServerReflection entry (the caller's request limit), like any other.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { toBinary, type DescFile, type DescMessage, type DescEnum, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import type { MaybePromise } from "../maybePromise.js";

/** The request fields both protocol versions share (they differ only in package). */
type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;
type Answer =
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

const NOT_FOUND = 5;
const UNIMPLEMENTED = 12;

export function reflectionHandlers(
  services: DescService[],
  /** Admits one reflection message of the caller (throws when over its limit, ending the stream). */
  admit: (ctx: HandlerContext) => MaybePromise<unknown>,
): {
  v1: ServiceImpl<typeof v1.ServerReflection>;
  v1alpha: ServiceImpl<typeof v1alpha.ServerReflection>;
} {
  const all = [...services, v1.ServerReflection, v1alpha.ServerReflection];
  const files = new Map<string, DescFile>();
  const bySymbol = new Map<string, DescFile>();
  const add = (file: DescFile): void => {
    if (files.has(file.name + ".proto")) return;
    files.set(file.name + ".proto", file);
    for (const d of file.dependencies) add(d);
    for (const s of file.services) {
      bySymbol.set(s.typeName, file);
      for (const m of s.methods) bySymbol.set(`${s.typeName}.${m.name}`, file);
    }
    const types = (list: (DescMessage | DescEnum)[]): void => {
      for (const t of list) {
        bySymbol.set(t.typeName, file);
        if (t.kind === "message") types([...t.nestedMessages, ...t.nestedEnums]);
      }
    };
    types([...file.messages, ...file.enums]);
  };
  for (const s of all) add(s.file);

  /** A file and everything it imports, each once, the file first. */
  const withDependencies = (file: DescFile): Uint8Array[] => {
    const seen = new Set<DescFile>();
    const out: Uint8Array[] = [];
    const walk = (f: DescFile): void => {
      if (seen.has(f)) return;
      seen.add(f);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
      for (const d of f.dependencies) walk(d);
    };
    walk(file);
    return out;
  };

  const answer = (req: Request): Answer => {
    const m = req.messageRequest;
    switch (m.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: all.map((s) => ({ name: s.typeName })) } };
      case "fileByFilename": {
        const file = files.get(m.value);
        return file ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file) } } : notFound(`no file ${m.value}`);
      }
      case "fileContainingSymbol": {
        const file = bySymbol.get(m.value.replace(/^\./, ""));
        return file ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file) } } : notFound(`no symbol ${m.value}`);
      }
      default:
        return { case: "errorResponse", value: { errorCode: UNIMPLEMENTED, errorMessage: "extensions are not served" } };
    }
  };

  return {
    v1: {
      async *serverReflectionInfo(requests, ctx) {
        for await (const req of requests) {
          await admit(ctx);
          yield { validHost: req.host, originalRequest: req, messageResponse: answer(req) };
        }
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests, ctx) {
        for await (const req of requests) {
          await admit(ctx);
          yield { validHost: req.host, originalRequest: req, messageResponse: answer(req) };
        }
      },
    },
  };
}

function notFound(message: string): Answer {
  return { case: "errorResponse", value: { errorCode: NOT_FOUND, errorMessage: message } };
}
