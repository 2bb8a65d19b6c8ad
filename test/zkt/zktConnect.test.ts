// The same ZKT operations through the generated Connect client (gRPC and Connect JSON) give the same
// results as REST; and market-fee mode (EIP-1559, signers funded on the dev chain) works end to end.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { JsonRpcProvider, toUtf8String } from "ethers";
import { TransactionStatus, ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { TOKEN_ABI, TOKEN_SOURCE } from "../fixtures/contracts.js";

const list = (v: unknown[]) => fromJson(ListValueSchema, v as never);

describe("ZKT over Connect", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway({ networks: ["testnet", "mainnet"], mutate: (c) => (c.networks.find((n) => n.name === "mainnet")!.feeMode = "market") });
  });
  afterAll(() => gw?.close());

  for (const [label, network, transport] of [
    ["gRPC, zero-fee testnet", "testnet", (url: string) => createGrpcTransport({ baseUrl: url })],
    ["Connect JSON, market-fee mainnet", "mainnet", (url: string) => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
  ] as const) {
    it(`${label}: message, deploy, read, write with wait, status — same as REST`, async () => {
      const net = gw.network(network);
      const client = createClient(ZktService, transport(net.url));
      const provider = new JsonRpcProvider(net.upstreamUrls[0], undefined, { staticNetwork: true, pollingInterval: 100 });

      const msg = await client.writeMessage({ message: "via connect" });
      const tx = await provider.waitForTransaction(msg.hash, 1, 10_000).then(() => provider.getTransaction(msg.hash));
      expect(toUtf8String(tx!.data)).toBe("via connect");
      // One name on every transport (#65): `arguments`, as REST and Stability's clients send it; `message` its alias.
      const named = await client.writeMessage({ arguments: "named as over REST", wait: true });
      const namedTx = await provider.getTransaction(named.hash);
      expect(toUtf8String(namedTx!.data)).toBe("named as over REST");
      const both = await client.writeMessage({ arguments: "one", message: "another" }).catch((e: unknown) => e as ConnectError);
      expect(both).toBeInstanceOf(ConnectError);
      expect((both as ConnectError).code).toBe(Code.InvalidArgument);
      expect(tx!.from).toBe(gw.publicSignerAddress);
      if (network === "mainnet") {
        expect(tx!.type).toBe(2);
        expect(tx!.maxFeePerGas! > 0n).toBe(true);
      }

      const deployed = await client.deployContract({ code: TOKEN_SOURCE, arguments: list(["Connect Token", "CT", "500"]) });
      expect(deployed.contractAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect((toJson(ListValueSchema, deployed.abi!) as { name?: string }[]).some((e) => e.name === "transfer")).toBe(true);

      const info = await client.readContract({ to: deployed.contractAddress, abi: list(TOKEN_ABI), method: "info", arguments: list([]) });
      expect(toJson(ListValueSchema, info.output!)).toEqual(["Connect Token", "CT", "500"]);
      // REST gives the same output for the same read.
      const rest = await postJson(net.url + "/zkt/try-it-out", { to: deployed.contractAddress, abi: TOKEN_ABI, method: "info", arguments: [] });
      expect((rest.json as { output: unknown[] }).output).toEqual(toJson(ListValueSchema, info.output!));

      const write = await client.writeContract({
        to: deployed.contractAddress,
        abi: list(TOKEN_ABI),
        method: "transfer",
        arguments: list(["0x000000000000000000000000000000000000dEaD", "5"]),
        wait: true,
      });
      expect(write.receipt?.status).toBe("success");
      expect(write.receipt?.logs[0]?.event).toBe("Transfer");
      expect(write.receipt?.logs[0]?.args).toEqual({ from: gw.publicSignerAddress, to: "0x000000000000000000000000000000000000dEaD", value: "5" });

      // Completed at the confirmation depth (DESIGN.md), a block or so after the receipt the caller waited for.
      let status = await client.getTransactionStatus({ queueId: write.queueId });
      for (let i = 0; i < 100 && status.status !== TransactionStatus.COMPLETED; i++) {
        expect([TransactionStatus.PENDING, TransactionStatus.PROCESSING]).toContain(status.status);
        await new Promise((r) => setTimeout(r, 100));
        status = await client.getTransactionStatus({ queueId: write.queueId });
      }
      expect(status.status).toBe(TransactionStatus.COMPLETED);
      expect(status.transactionHash).toBe(write.hash);

      const bad = await client
        .writeContract({ to: deployed.contractAddress, abi: list(TOKEN_ABI), method: "transfer", arguments: list(["0x12", "5"]) })
        .catch((e: unknown) => e as ConnectError);
      expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
      expect((bad as ConnectError).rawMessage).toMatch(/is not an address/);
      const reverted = await client
        .writeContract({
          to: deployed.contractAddress,
          abi: list(TOKEN_ABI),
          method: "transfer",
          arguments: list(["0x000000000000000000000000000000000000dEaD", "100000"]),
        })
        .catch((e: unknown) => e as ConnectError);
      expect((reverted as ConnectError).code).toBe(Code.FailedPrecondition);
      expect((reverted as ConnectError).rawMessage).toMatch(/InsufficientBalance/);

      // wait: false answers before the block; the address given is where the contract is mined.
      const later = await client.deployContract({ code: TOKEN_SOURCE, arguments: list(["Later", "LTR", "1"]), wait: false });
      expect((await provider.waitForTransaction(later.hash, 1, 10_000))?.contractAddress).toBe(later.contractAddress);

      // idempotency_key: a retry gets the first answer and sends nothing new; another method's key is its own.
      const key = `retry-${network}-${Date.now()}`;
      const first = await client.writeMessage({ message: "once", idempotencyKey: key });
      await provider.waitForTransaction(first.hash, 1, 10_000);
      const nonceAfterFirst = await provider.getTransactionCount(gw.publicSignerAddress, "pending");
      const [again, concurrent] = await Promise.all([
        client.writeMessage({ message: "once", idempotencyKey: key }),
        client.writeMessage({ message: "once", idempotencyKey: key }),
      ]);
      expect([again.hash, again.queueId, concurrent.hash]).toEqual([first.hash, first.queueId, first.hash]);
      const reused = await client.writeMessage({ message: "another", idempotencyKey: key }).catch((e: unknown) => e as ConnectError);
      expect((reused as ConnectError).code).toBe(Code.FailedPrecondition);
      expect((reused as ConnectError).rawMessage).toMatch(/different request payload/);
      const otherMethod = await client.writeContract({
        to: deployed.contractAddress,
        abi: list(TOKEN_ABI),
        method: "transfer",
        arguments: list(["0x000000000000000000000000000000000000dEaD", "1"]),
        idempotencyKey: key,
      });
      expect(otherMethod.hash).not.toBe(first.hash);
      await provider.waitForTransaction(otherMethod.hash, 1, 10_000);
      expect(await provider.getTransactionCount(gw.publicSignerAddress, "pending")).toBe(nonceAfterFirst + 1);
      const tooLong = await client.writeMessage({ message: "x", idempotencyKey: "k".repeat(201) }).catch((e: unknown) => e as ConnectError);
      expect((tooLong as ConnectError).code).toBe(Code.InvalidArgument);
      provider.destroy();
    });
  }
});
