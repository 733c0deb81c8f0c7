import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { BackfillTotals } from '../contract/index.js';

/**
 * The metrics of work done, published by a follower run (lambda/sync/lambda.ts) and by a backfill batch
 * (lambda/backfill/lambda/worker.ts) under the same names and units, so the dashboard reads either the same way.
 */
export function addWorkMetrics(metrics: Metrics, work: BackfillTotals): void {
  metrics.addMetric('Leaves', MetricUnit.Count, work.leaves);
  metrics.addMetric('Commits', MetricUnit.Count, work.commits);
  metrics.addMetric('Deletes', MetricUnit.Count, work.deletes);
  metrics.addMetric('Quarantined', MetricUnit.Count, work.quarantined);
  metrics.addMetric('Bytes', MetricUnit.Bytes, work.bytes);
}
