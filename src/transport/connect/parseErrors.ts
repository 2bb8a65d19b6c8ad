// A request body that is not valid binary protobuf is the caller's mistake, but connect-es answers it
// `internal` (500): its binary serializer wraps every decode error so, before any interceptor runs, while
// its JSON one says `invalid_argument` (connect-go says `invalid_argument` for both). connect-es aborts the
// handler context with the error just before writing it, on Connect, gRPC and gRPC-Web alike, so a
// listener on that signal re-codes it there: one place for the three protocols.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";

/** connect-es's message for a protobuf decode failure (`createBinarySerialization().parse`). */
const BINARY_PARSE = "parse binary: ";

export function recodeParseErrors(ctx: HandlerContext): void {
  ctx.signal.addEventListener(
    "abort",
    () => {
      const reason: unknown = ctx.signal.reason;
      if (!(reason instanceof ConnectError) || reason.code !== Code.Internal || !reason.rawMessage.startsWith(BINARY_PARSE)) return;
      // ConnectError's fields are readonly in its types only; this is the error about to be written.
      const recoded = reason as { code: Code; message: string };
      recoded.code = Code.InvalidArgument;
      recoded.message = `[invalid_argument] ${reason.rawMessage}`;
    },
    { once: true },
  );
}
