// Results that are usually ready at once (a local answer, a local rate-limit decision) travel through the
// request path as plain values: a promise per layer, and its microtask, only where something really waits.
export type MaybePromise<T> = T | Promise<T>;

/** `f(v)` now when `v` is ready, else once it is. */
export function andThen<T, U>(v: MaybePromise<T>, f: (t: T) => MaybePromise<U>): MaybePromise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}
