/**
 * The private NuGet feed of a `CatalogSync` (its `feed` props), under the construct id `Feed`: the
 * {@link FeedDistribution} that serves `{prefix}feed/` (`Distribution`), the feed's writer, a consumer after the
 * latest view (`Writer`, feed-writer.ts), and the stack outputs an operator copies: the base URL the feed is written
 * for, and the distribution's id (for an invalidation).
 */
import { CfnOutput } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { CatalogSyncPropsError } from '../props-error.js';
import type { CatalogConsumer } from './catalog-consumer.js';
import { FeedDistribution, type FeedDistributionOptions } from './feed-distribution.js';
import { addFeedWriter, type FeedWriter, type FeedWriterOptions, type FeedWriterSync } from './feed-writer.js';

/** The feed of a `CatalogSync`'s mirror (`CatalogSyncProps.feed`). */
export interface CatalogSyncFeedProps {
  /**
   * CloudFront in front of `{prefix}feed/` (true, or its options), or nothing (false: serve the feed yourself).
   * @default true
   */
  readonly distribution?: boolean | FeedDistributionOptions;
  /**
   * The consumer `feed` that writes the feed from the latest view (true, or its options), or none (false: write it
   * yourself, e.g. `catalog-sync feed`). Its base URL is the distribution's unless `writer.baseUrl` is given.
   * @default true
   */
  readonly writer?: boolean | FeedWriterOptions;
}

/** What {@link addFeed} made. */
export interface SyncFeed {
  /** The distribution, unless `distribution` is false. */
  readonly distribution?: FeedDistribution;
  /** The feed's writer, unless `writer` is false. */
  readonly writer?: CatalogConsumer;
  /** The writer's alarm on the package versions it quarantines (`FeedPackagesQuarantined` >= 1 in 5 minutes). */
  readonly quarantinedAlarm?: cloudwatch.Alarm;
}

/**
 * Whether the feed of `props` needs the latest view: its writer is a consumer after the view, so a feed with a writer
 * keeps the view too.
 *
 * @throws {@link CatalogSyncPropsError} for a writer with `view: false`.
 */
export function feedNeedsView(props: { readonly view?: boolean; readonly feed?: CatalogSyncFeedProps }): boolean {
  const writer = props.feed !== undefined && props.feed.writer !== false;
  if (writer && props.view === false)
    throw new CatalogSyncPropsError(
      'feed: its writer is made from the latest view: leave view on, or feed.writer false',
    );
  return writer;
}

/**
 * Adds the feed's parts to `sync` under the construct id `Feed`; with `outputPrefix`, the outputs
 * `{outputPrefix}FeedBaseUrl` and `{outputPrefix}FeedDistributionId`.
 *
 * @throws {@link CatalogSyncPropsError} for a writer with no base URL (no distribution and no `writer.baseUrl`).
 */
export function addFeed(
  sync: FeedWriterSync,
  props: CatalogSyncFeedProps,
  outputPrefix?: string,
  alarmTopic?: sns.ITopic,
): SyncFeed {
  const scope = new Construct(sync, 'Feed');
  const options = props.distribution ?? true;
  const writerOptions = props.writer ?? true;
  const distribution =
    options === false
      ? undefined
      : new FeedDistribution(scope, 'Distribution', {
          ...(options === true ? {} : options),
          bucket: sync.bucket,
          prefix: sync.prefix,
        });
  let writer: FeedWriter | undefined;
  if (writerOptions !== false) {
    const given = writerOptions === true ? {} : writerOptions;
    const baseUrl = given.baseUrl ?? distribution?.baseUrl;
    if (baseUrl === undefined)
      throw new CatalogSyncPropsError(
        'feed.writer needs the URL at which the feed is served: give feed.writer.baseUrl, or keep feed.distribution',
      );
    writer = addFeedWriter(scope, sync, { ...given, baseUrl, ...(alarmTopic ? { alarmTopic } : {}) });
  }
  if (distribution !== undefined && outputPrefix !== undefined) {
    new CfnOutput(sync, 'FeedBaseUrlOutput', {
      value: distribution.baseUrl,
      description: "The feed's base URL: write the feed with it; NuGet clients use it followed by index.json",
    }).overrideLogicalId(`${outputPrefix}FeedBaseUrl`);
    new CfnOutput(sync, 'FeedDistributionIdOutput', {
      value: distribution.distribution.distributionId,
      description: "The feed's CloudFront distribution (aws cloudfront create-invalidation --distribution-id)",
    }).overrideLogicalId(`${outputPrefix}FeedDistributionId`);
  }
  return { ...(distribution ? { distribution } : {}), ...(writer ?? {}) };
}
