/**
 * metadataOf keeps the last commit's formatted timestamp and metadata-safe id: whatever order items come in,
 * each leaf's metadata is that of its own commit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PageItem } from '../../lambda/catalog/index.js';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { metadataOf } from '../../lambda/sync/layout.js';

const commits = [
  { commitId: 'a1b2c3', commitTicks: 636_451_434_324_197_849n },
  { commitId: 'a1b2c3', commitTicks: 636_451_434_324_197_850n },
  { commitId: 'ünïcode', commitTicks: 636_451_434_324_197_849n },
  { commitId: 'd4e5f6', commitTicks: 0n },
];

describe('metadataOf', () => {
  it("gives each leaf its own commit's id and timestamp, in any order of items", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom(...commits),
            fc.constantFrom('Newtonsoft.Json', 'Ünï'),
            fc.constantFrom('1.0.0', '2.0.0-β'),
          ),
          { maxLength: 30 },
        ),
        (items) => {
          for (const [commit, id, version] of items) {
            const item: PageItem = {
              url: 'https://x.test/l.json',
              type: 'PackageDetails',
              commitTimeStamp: 'unused',
              id,
              version,
              ...commit,
            };
            expect(metadataOf(item)).toStrictEqual({
              'nuget-id': /^[\x20-\x7e]*$/.test(id) ? id : encodeURIComponent(id),
              'nuget-version': /^[\x20-\x7e]*$/.test(version) ? version : encodeURIComponent(version),
              'catalog-type': 'PackageDetails',
              'commit-id': /^[\x20-\x7e]*$/.test(commit.commitId)
                ? commit.commitId
                : encodeURIComponent(commit.commitId),
              'commit-timestamp': formatTimestamp(commit.commitTicks),
            });
          }
        },
      ),
    );
  });
});
