// What a JSON-RPC call counts against the request limits (#54): every method 1 unless the operator weighs it
// (METHOD_WEIGHTS), so one eth_getLogs that costs a node a thousand eth_chainIds can be counted closer to it.
// Exact names first, then the longest prefix ending in * (debug_*).

export class MethodWeights {
  private readonly exact = new Map<string, number>();
  /** [prefix, units], longest first. */
  private readonly prefixes: [string, number][] = [];
  /** No weights configured: every call is 1 (the hot path asks nothing). */
  uniform = true;

  constructor(table: Record<string, number>) {
    this.replace(table);
  }

  /** Takes a new table (a reloaded configuration): the next calls are weighed by it. */
  replace(table: Record<string, number>): void {
    this.exact.clear();
    this.prefixes.length = 0;
    for (const [name, units] of Object.entries(table)) {
      if (name.endsWith("*")) this.prefixes.push([name.slice(0, -1), units]);
      else this.exact.set(name, units);
    }
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
    this.uniform = this.exact.size === 0 && this.prefixes.length === 0;
  }

  of(method: string): number {
    if (this.uniform) return 1;
    const units = this.exact.get(method);
    if (units !== undefined) return units;
    for (const [prefix, u] of this.prefixes) if (method.startsWith(prefix)) return u;
    return 1;
  }

  /** A batch's units: the sum of its calls' (at least 1). */
  sum(methods: Iterable<string>): number {
    let total = 0;
    for (const m of methods) total += this.of(m);
    return Math.max(1, total);
  }
}
