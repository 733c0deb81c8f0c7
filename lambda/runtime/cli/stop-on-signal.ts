/** A stop for a long command: Ctrl-C (or SIGTERM) aborts it gracefully; a second one exits at once (130). */
export interface SignalStop {
  readonly signal: AbortSignal;
  /** Removes the listeners (call in `finally`). */
  release(): void;
}

/** Listens for SIGINT and SIGTERM until released. */
export function stopOnSignal(): SignalStop {
  const stop = new AbortController();
  const onSignal = (): void => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
