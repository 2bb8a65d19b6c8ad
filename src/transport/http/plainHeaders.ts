// Headers for an in-process handler call: a plain record behind the Fetch Headers interface. The guard sets
// the X-RateLimit-* headers on every call; undici's Headers validates and sorts on each set and read, which
// cost an in-process JSON-RPC call more than the rest of its way to the core. Names are kept lower-case, as
// Headers does; the names and values come from our own code, so they are not validated again (and a plain
// object, not a null-prototype one, keeps V8's fast properties for the router's copy).
export class PlainHeaders implements Headers {
  readonly record: Record<string, string> = {};

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const had = this.record[key];
    this.record[key] = had === undefined ? value : `${had}, ${value}`;
  }
  delete(name: string): void {
    delete this.record[name.toLowerCase()];
  }
  get(name: string): string | null {
    return this.record[name.toLowerCase()] ?? null;
  }
  getSetCookie(): string[] {
    const v = this.record["set-cookie"];
    return v === undefined ? [] : [v];
  }
  has(name: string): boolean {
    return this.record[name.toLowerCase()] !== undefined;
  }
  set(name: string, value: string): void {
    this.record[name.toLowerCase()] = value;
  }
  forEach(fn: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }
  *entries(): HeadersIterator<[string, string]> {
    for (const k of Object.keys(this.record).sort()) yield [k, this.record[k]!];
  }
  *keys(): HeadersIterator<string> {
    for (const [k] of this.entries()) yield k;
  }
  *values(): HeadersIterator<string> {
    for (const [, v] of this.entries()) yield v;
  }
  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }
}
