/** The latest view's fixed names (contract.md, "The latest view"), shared by the view and the CDK constructs. */

/** The built-in view consumer's cursor name (`pk` of its cursor item). */
export const VIEW_CONSUMER = 'view-latest';

/** The key pattern of the view's documents under the sync's prefix: `packages/{id}/index.json`. */
export const VIEW_KEYS = 'packages/*';

/**
 * The key, under the prefix, the view's conditional-PUT check writes (docs/contract.md, "What an S3-compatible server
 * must guarantee"): beside `view.json`, outside `packages/`, so that a reader listing the indexes never meets it.
 */
export const VIEW_PROBE_KEY = 'view-conditional-put-check';
