/**
 * The memory a response body may take, as the caller (the engine's leaf memory budget, sync/leaf-memory.ts) holds
 * it for the body: the HTTP client asks for the body's bytes as soon as it knows them (the declared
 * `Content-Length`, else the bytes received so far) and for its decoded copy, before it holds them across a wait.
 */
import { BodyDeferredError, LeafMemoryError } from './http-errors.js';

/** The answer to a {@link BodyMemory.hold}: held; not now (other bodies hold the budget); never (more than the budget). */
export type BodyHold = 'held' | 'later' | 'never';

/** Memory held for one body. */
export interface BodyMemory {
  /** The whole budget, and where it comes from (for the error of a body that can never fit). */
  readonly budget: { readonly bytes: number; readonly from: string };
  /** Asks that `bytes` in all be held for this body (more than held so far; never waits). */
  hold(bytes: number): BodyHold;
}

/**
 * Holds `bytes` for the body at `url`, or throws: {@link BodyDeferredError} when not now (the caller drops the
 * request and fetches again once they fit), {@link LeafMemoryError} when never.
 */
export function holdBody(memory: BodyMemory, url: string, bytes: number, atLeast = false): void {
  const answer = memory.hold(bytes);
  if (answer === 'held') return;
  if (answer === 'never') throw new LeafMemoryError(url, bytes, memory.budget, atLeast);
  throw new BodyDeferredError(url, bytes);
}
