// Results that are usually ready at once (a local answer, a local rate-limit decision) travel through the
// request path as plain values: a promise per layer, and its microtask, only where something really waits.
export type MaybePromise<T> = T | Promise<T>;

/** `ok` of what `f` gives, now when it is ready, else once it is; `fail` of what `f` throws or rejects with. */
export function attempt<T, U>(f: () => MaybePromise<T>, ok: (t: T) => U, fail: (err: unknown) => U): MaybePromise<U> {
  let v: MaybePromise<T>;
  try {
    v = f();
  } catch (err) {
    return fail(err);
  }
  return v instanceof Promise ? v.then(ok, fail) : ok(v);
}

/** `f(v)` now when `v` is ready, else once it is. */
export function andThen<T, U>(v: MaybePromise<T>, f: (t: T) => MaybePromise<U>): MaybePromise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}
