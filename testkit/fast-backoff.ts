/**
 * A backoff for the SDK retry strategy of the lean S3 PUT in tests (`S3PutOptions.backoff`): 1 ms before each retry,
 * so a test of many retries takes no time. Everything else (which answers are retried, the token bucket) stays the
 * SDK's; the SDK's own delays are held to the SDK's PutObject in test/integration/s3-put/s3-put-vs-sdk.test.ts.
 */
import type { StandardRetryBackoffStrategy } from '@smithy/types';

/** 1 ms before each retry. */
export const FAST_BACKOFF: StandardRetryBackoffStrategy = {
  computeNextBackoffDelay: () => 1,
  setDelayBase: () => undefined,
};

/** `ms` before each retry (a test that must stop a PUT in its wait). */
export function fixedBackoff(ms: number): StandardRetryBackoffStrategy {
  return { computeNextBackoffDelay: () => ms, setDelayBase: () => undefined };
}
