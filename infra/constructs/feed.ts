/**
 * The private NuGet feed of a `CatalogSync` (its `feed` props): today the {@link FeedDistribution} that serves
 * `{prefix}feed/` (construct id `Feed`, then `Distribution`), with the stack outputs an operator copies: the base
 * URL to give the feed, and the distribution's id (for an invalidation). The feed's writer (a consumer beside it)
 * joins it here.
 */
import { CfnOutput } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { ConsumableSync } from './consumable-sync.js';
import { FeedDistribution, type FeedDistributionOptions } from './feed-distribution.js';

/** The feed of a `CatalogSync`'s mirror (`CatalogSyncProps.feed`). */
export interface CatalogSyncFeedProps {
  /**
   * CloudFront in front of `{prefix}feed/` (true, or its options), or nothing (false: serve the feed yourself).
   * @default true
   */
  readonly distribution?: boolean | FeedDistributionOptions;
}

/** What {@link addFeed} made. */
export interface SyncFeed {
  /** The distribution, unless `distribution` is false. */
  readonly distribution?: FeedDistribution;
}

/**
 * Adds the feed's parts to `sync` under the construct id `Feed`; with `outputPrefix`, the outputs
 * `{outputPrefix}FeedBaseUrl` and `{outputPrefix}FeedDistributionId`.
 */
export function addFeed(sync: ConsumableSync, props: CatalogSyncFeedProps, outputPrefix?: string): SyncFeed {
  const scope = new Construct(sync, 'Feed');
  const options = props.distribution ?? true;
  if (options === false) return {};
  const distribution = new FeedDistribution(scope, 'Distribution', {
    ...(options === true ? {} : options),
    bucket: sync.bucket,
    prefix: sync.prefix,
  });
  if (outputPrefix !== undefined) {
    new CfnOutput(sync, 'FeedBaseUrlOutput', {
      value: distribution.baseUrl,
      description: "The feed's base URL: write the feed with it; NuGet clients use it followed by index.json",
    }).overrideLogicalId(`${outputPrefix}FeedBaseUrl`);
    new CfnOutput(sync, 'FeedDistributionIdOutput', {
      value: distribution.distribution.distributionId,
      description: "The feed's CloudFront distribution (aws cloudfront create-invalidation --distribution-id)",
    }).overrideLogicalId(`${outputPrefix}FeedDistributionId`);
  }
  return { distribution };
}
