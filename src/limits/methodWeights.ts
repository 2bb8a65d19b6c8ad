// What a JSON-RPC call counts against the request limits: every method 1 unless the operator weighs it
// (METHOD_WEIGHTS), so one eth_getLogs that costs a node a thousand eth_chainIds can be counted closer to it.
// Exact names first, then the longest prefix ending in * (debug_*).

import { MethodTable } from "../methodTable.js";

export class MethodWeights {
  private readonly table = new MethodTable<number>();
  /** No weights configured: every call is 1 (the hot path asks nothing). */
  uniform = true;

  constructor(table: Record<string, number>) {
    this.replace(table);
  }

  /** Takes a new table (a reloaded configuration): the next calls are weighed by it. */
  replace(table: Record<string, number>): void {
    this.table.replace(table);
    this.uniform = this.table.empty;
  }

  of(method: string): number {
    return this.uniform ? 1 : (this.table.of(method) ?? 1);
  }

  /** A batch's units: the sum of its calls' (at least 1). */
  sum(methods: Iterable<string>): number {
    let total = 0;
    for (const m of methods) total += this.of(m);
    return Math.max(1, total);
  }
}
