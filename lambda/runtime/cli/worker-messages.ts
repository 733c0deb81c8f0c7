/**
 * What a pool's parent and its worker processes say to each other over the IPC channel (plain JSON: no bigint
 * crosses it). The parent hands out one item at a time; a worker reports progress and the outcome.
 */

/** Parent to worker. */
export type ToWorker<Item, Options> =
  | { readonly type: 'init'; readonly options: Options }
  | { readonly type: 'item'; readonly item: Item }
  /** Stop the item in hand at once (what it completed kept), then wait for `exit`. */
  | { readonly type: 'stop' }
  | { readonly type: 'exit' };

/** Worker to parent. */
export type FromWorker<Outcome> =
  | { readonly type: 'ready' }
  /** How far the item in hand got (this attempt only): the backfill's leaves stored, the rebuild's manifests read. */
  | { readonly type: 'progress'; readonly n: number; readonly amount: number }
  | { readonly type: 'outcome'; readonly outcome: Outcome }
  /** `n` -1: the worker could not open its stores, and exits. */
  | { readonly type: 'failed'; readonly n: number; readonly message: string; readonly code?: string };
