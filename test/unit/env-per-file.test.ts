/** testkit/env-per-file.ts: what a test file does to process.env is undone after it. */
import { describe, expect, it } from 'vitest';
import { snapshotEnvironment } from '../../testkit/env-per-file.js';

describe('snapshotEnvironment', () => {
  it('puts back changed and deleted variables and removes added ones', () => {
    process.env.CATALOG_SYNC_ENV_TEST_KEPT = 'before';
    process.env.CATALOG_SYNC_ENV_TEST_DELETED = 'there';
    const before = { ...process.env };
    const restore = snapshotEnvironment();
    process.env.CATALOG_SYNC_ENV_TEST_KEPT = 'changed';
    delete process.env.CATALOG_SYNC_ENV_TEST_DELETED;
    process.env.CATALOG_SYNC_ENV_TEST_ADDED = 'new';
    restore();
    expect({ ...process.env }).toEqual(before);
    delete process.env.CATALOG_SYNC_ENV_TEST_KEPT;
    delete process.env.CATALOG_SYNC_ENV_TEST_DELETED;
  });
});
