// A value per JSON-RPC method, by exact name or by a prefix ending in `*` (`debug_*`), the longest prefix
// winning: how per-method settings (weights, upstream policies) are written in the configuration.
export class MethodTable<T> {
  private readonly exact = new Map<string, T>();
  /** [prefix, value], longest first. */
  private readonly prefixes: [string, T][] = [];

  constructor(table: Record<string, T> = {}) {
    this.replace(table);
  }

  /** No entries: callers on a hot path skip the lookup. */
  empty = true;

  /** Takes a new table (a reloaded configuration). */
  replace(table: Record<string, T>): void {
    this.exact.clear();
    this.prefixes.length = 0;
    for (const [name, value] of Object.entries(table)) {
      if (name.endsWith("*")) this.prefixes.push([name.slice(0, -1), value]);
      else this.exact.set(name, value);
    }
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
    this.empty = this.exact.size === 0 && this.prefixes.length === 0;
  }

  of(method: string): T | undefined {
    const value = this.exact.get(method);
    if (value !== undefined) return value;
    for (const [prefix, v] of this.prefixes) if (method.startsWith(prefix)) return v;
    return undefined;
  }
}
