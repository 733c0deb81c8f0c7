/**
 * What Step Functions sees of a function's error (the backfill's, the view rebuild's) is its `name` (Lambda's `errorType`): the state's Error, what
 * a Retry or Catch of the definition matches and what the console shows. A catalog-sync error is given its stable code
 * as its name on the way out, so that Error is the code the docs, the CLI and `error.code` use
 * (`CS_ERR_BACKFILL_RUNNING`), never a class name; the message (the Cause) and the error itself are unchanged.
 */
import { CatalogSyncError } from '../contract/index.js';

/** Runs a handler's work; a catalog-sync error it throws leaves with its code as its name. */
export async function withCodedErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CatalogSyncError) Object.defineProperty(error, 'name', { value: error.code });
    throw error;
  }
}
