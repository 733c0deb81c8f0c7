/** One row of the benchmark's table: a scenario's figures and what the servers saw meanwhile. */
import type { ProfileSummary } from './profile-summary.js';
import type { ScenarioResult } from './scenario-types.js';

/** A scenario's figures plus what the servers saw meanwhile. */
export interface Row extends ScenarioResult {
  readonly serverCpuMs: number;
  /** Server CPU as a share of one core over the scenario's wall time. */
  readonly serverCpuShare: number;
  /** CPU of every other process (other sessions, DynamoDB Local, ...) as a share of one core; NaN if unknown. */
  readonly othersCpuShare: number;
  readonly leafRequests: number;
  readonly pageRequests: number;
  readonly s3Puts: number;
  /** PUTs the fake S3 answered after its slow tail's latency. */
  readonly slowPuts?: number;
  readonly profile?: ProfileSummary;
  /** With --repeat: leaves/s of every run of this scenario (the row is the median one). */
  readonly repeats?: number[];
}
