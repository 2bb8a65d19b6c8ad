// Lets several concurrent starts wait for one another at one point (the gateway opens every network's port
// only once all networks are ready), and lets one that fails release the others with its error.

export interface Barrier {
  /** Resolves once every party has arrived; rejects if the barrier is aborted first. */
  arrive(): Promise<void>;
  /** Rejects those waiting and those still to come; after everyone arrived, does nothing. */
  abort(err: unknown): void;
}

export function barrier(parties: number): Barrier {
  let arrived = 0;
  let release!: () => void;
  let abort!: (err: unknown) => void;
  const all = new Promise<void>((resolve, reject) => {
    release = resolve;
    abort = reject;
  });
  all.catch(() => undefined); // aborted with no one waiting: not an unhandled rejection
  return {
    arrive: () => {
      if (++arrived === parties) release();
      return all;
    },
    abort,
  };
}
