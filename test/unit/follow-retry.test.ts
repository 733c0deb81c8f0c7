/**
 * `run --follow` through an outage: which failures a later slice can get past (lambda/sync/cli/follow-retry.ts), and
 * the waits between failed slices.
 */
import { describe, expect, it } from 'vitest';
import { FetchError } from '../../lambda/catalog/http-errors.js';
import { InvalidDocumentError } from '../../lambda/catalog/errors.js';
import { FollowBackoff, followCanRetry } from '../../lambda/sync/cli/follow-retry.js';
import { SettingsError } from '../../lambda/contract/settings.js';
import { S3PutError } from '../../lambda/stores/s3-put-error.js';

const named = (name: string): Error => Object.assign(new Error(name), { name });

describe('followCanRetry', () => {
  it('retries what passes: no answer, 5xx and 429, a lean PUT with no answer, SDK throttling and unknown errors', () => {
    expect(followCanRetry(new FetchError('https://feed.example/index.json', 'ECONNRESET', true))).toBe(true);
    expect(followCanRetry(new FetchError('https://feed.example/index.json', 'HTTP 503', true, { status: 503 }))).toBe(
      true,
    );
    expect(followCanRetry(new FetchError('https://feed.example/index.json', 'HTTP 429', true, { status: 429 }))).toBe(
      true,
    );
    expect(
      followCanRetry(new S3PutError({ bucket: 'b', key: 'k', status: 500, s3Code: 'InternalError', attempts: 5 })),
    ).toBe(true);
    expect(followCanRetry(named('ThrottlingException'))).toBe(true);
    expect(followCanRetry(new Error('socket hang up'))).toBe(true);
  });

  it('stops on what needs a person: settings, documents, 401/403/404, a missing table or bucket, refused credentials', () => {
    expect(followCanRetry(new SettingsError('AWS_REGION', 'is not set'))).toBe(false);
    expect(followCanRetry(new InvalidDocumentError('https://feed.example/leaf.json', 'not valid JSON'))).toBe(false);
    expect(followCanRetry(new FetchError('https://feed.example/index.json', 'HTTP 401', false, { status: 401 }))).toBe(
      false,
    );
    expect(followCanRetry(new FetchError('https://feed.example/leaf.json', 'HTTP 404', true, { status: 404 }))).toBe(
      false,
    );
    expect(
      followCanRetry(new S3PutError({ bucket: 'b', key: 'k', status: 404, s3Code: 'NoSuchBucket', attempts: 1 })),
    ).toBe(false);
    expect(followCanRetry(named('ResourceNotFoundException'))).toBe(false);
    expect(followCanRetry(named('UnrecognizedClientException'))).toBe(false);
  });

  it('an unreachable AWS endpoint: a set-up error on the first slice, an outage once a slice has worked', () => {
    const refused = new SettingsError('AWS_ENDPOINT_URL_DYNAMODB', 'could not be reached', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    expect(followCanRetry(refused)).toBe(false);
    expect(followCanRetry(refused, { setupProven: true })).toBe(true);
    expect(followCanRetry(new SettingsError('AWS_REGION', 'is not set'), { setupProven: true })).toBe(false);
  });
});

describe('FollowBackoff', () => {
  it('doubles from the first wait up to the most, with up to a quarter off, and starts again after a success', () => {
    const exact = new FollowBackoff(1_000, 8_000, () => 0);
    expect([1, 2, 3, 4, 5].map(() => exact.failed(0))).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(exact.outageFailures).toBe(5);
    expect(exact.outageMs(3_500)).toBe(3_500);
    exact.reset();
    expect(exact.outageFailures).toBe(0);
    expect(exact.failed(10_000)).toBe(1_000);
    const jittered = new FollowBackoff(1_000, 8_000, () => 1);
    expect(jittered.failed()).toBe(750);
  });
});
