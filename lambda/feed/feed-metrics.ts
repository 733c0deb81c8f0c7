import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { FEED_METRICS } from '../contract/feed.js';
import type { FeedCounts } from './feed-context.js';

/**
 * The feed's counts of one invocation as its Lambda's metrics (`FEED_METRICS`), each added even when 0, so that a
 * missing datapoint means the function did not run. `FeedPackagesWaiting` counts the source's "not yet": a version
 * tried again within the same invocation (its retry due after 1, 2, 4… minutes) counts each time; versions still
 * waiting whose retry is not due are not counted (their markers are under `feed-state/waiting/`).
 */
export function addFeedMetrics(metrics: Metrics, counts: FeedCounts): void {
  metrics.addMetric(FEED_METRICS.stored, MetricUnit.Count, counts.stored);
  metrics.addMetric(FEED_METRICS.storedBytes, MetricUnit.Bytes, counts.storedBytes);
  metrics.addMetric(FEED_METRICS.removed, MetricUnit.Count, counts.removed);
  metrics.addMetric(FEED_METRICS.waiting, MetricUnit.Count, counts.waiting);
  metrics.addMetric(FEED_METRICS.quarantined, MetricUnit.Count, counts.quarantined);
}
