#!/usr/bin/env node
// `npx chain-gateway` (or the installed package's bin): the bundle in dist/, run with the Node flags npm start
// uses (package.json's config.nodeFlags), in a child so V8 takes them; signals go to it, its exit code is ours.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const flags = String(pkg.config?.nodeFlags ?? "").split(/\s+/).filter(Boolean);
const child = spawn(process.execPath, [...flags, join(root, "dist", "main.mjs"), ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + 1 : 1)));
