import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { SyncDashboard } from './sync-dashboard.js';

/**
 * What a consumer needs of a `CatalogSync` (which has all of it): its own type, so that `CatalogSync` can create
 * consumers (the latest view) without an import loop between the two.
 */
export interface ConsumableSync extends Construct {
  /** The cursor table (consumer cursors live there too). */
  readonly table: dynamodb.ITable;
  readonly bucket: s3.IBucket;
  readonly prefix: string;
  /** The follower's cursor name, which a consumer may not take. */
  readonly cursorName: string;
  /** The rule on the mirror's `commits/` events, when the sync has commit events. */
  readonly commitRule?: events.Rule;
  readonly dashboard?: SyncDashboard;
}
