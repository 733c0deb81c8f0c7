/**
 * What the engine's end-to-end tests share (sync.test.ts, sync-stale-and-faults.test.ts): catalog replicas started
 * by a test and all stopped after the file's tests.
 */
import { afterAll } from 'vitest';
import type { GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';

/** Starts a replica of a generated catalog. */
export type ReplicaOf = (
  catalog: GeneratedCatalog,
  options?: Parameters<typeof CatalogReplica.start>[0],
) => Promise<CatalogReplica>;

/** A {@link ReplicaOf} whose replicas are stopped after the file's tests (call it once, at the file's top). */
export function useReplicas(): ReplicaOf {
  const replicas: CatalogReplica[] = [];
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
  });
  return async (catalog, options = {}) => {
    const replica = await CatalogReplica.start({ catalog, ...options });
    replicas.push(replica);
    return replica;
  };
}
