import { resolve } from 'node:path';
import { HttpClient } from '../../catalog/http-client.js';
import { parseSettings, SettingsError } from '../../contract/index.js';
import { requireMirror } from '../../consumer/cli/mirror-place.js';
import { openFeedStores } from '../../feed/cli/feed.js';
import { FeedError } from '../../feed/errors.js';
import type { FeedCounts } from '../../feed/feed-context.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { checkDataDir } from '../../runtime/cli/open-stores.js';
import { FLAG_NAMES, type StoreOptions } from '../../runtime/cli/options.js';
import { auditFeed, type FeedAuditSummary } from '../feed-audit.js';
import { describeFeedFinding, isDrift, type FeedFinding } from '../feed-findings.js';
import { repairFeed } from '../feed-repair.js';

/** The options of `verify` that `--feed` reads. */
export interface VerifyFeedOptions extends StoreOptions {
  repair?: boolean;
  json?: boolean;
  concurrency?: string;
  allowOrigin?: string[];
  include?: string[];
  exclude?: string[];
  packageBaseAddress?: string;
  since?: string;
  until?: string;
  deep?: boolean;
  sample?: string;
  quarantine?: boolean;
}

/** The flags of `verify` that mean nothing with `--feed`. */
const MIRROR_ONLY = [
  ['since', '--since'],
  ['until', '--until'],
  ['deep', '--deep'],
  ['sample', '--sample'],
  ['quarantine', '--quarantine'],
] as const;

/** `verify --include`/`--exclude`/`--package-base-address` without `--feed`: a usage error. */
export function refuseFeedFlags(options: VerifyFeedOptions): void {
  const given = options.include ?? options.exclude ?? options.packageBaseAddress;
  if (given !== undefined) {
    const flag =
      options.include !== undefined
        ? '--include'
        : options.exclude !== undefined
          ? '--exclude'
          : '--package-base-address';
    throw new SettingsError(flag, 'is a flag of verify --feed: give --feed too');
  }
}

/**
 * `catalog-sync verify --feed`: the drift report of the private feed against the mirror's latest view and leaves,
 * one line (or JSON line) per finding, then a summary; with `--repair`, the drifted packages made again by the feed
 * engine, then audited again. Exit 1 when drift remains, else 0.
 */
export async function verifyFeedCommand(options: VerifyFeedOptions): Promise<void> {
  for (const [name, flag] of MIRROR_ONLY)
    if (options[name] !== undefined && options[name] !== false)
      throw new SettingsError(flag, 'audits the mirror, not the feed: leave it out with --feed');
  const settings = parseSettings(
    {
      CATALOG_SOURCE: options.source,
      CONCURRENCY: options.concurrency,
      INCLUDE_IDS: options.include,
      EXCLUDE_IDS: options.exclude,
      ALLOWED_ORIGINS: options.allowOrigin,
    },
    FLAG_NAMES,
  );
  const stores = await openFeedStores(options, 'read');
  const http = new HttpClient({ connections: settings.concurrency });
  const write = (line: unknown): void => {
    process.stdout.write(options.json ? `${JSON.stringify(line)}\n` : `${String(line)}\n`);
  };
  const onFinding = (finding: FeedFinding): void => write(options.json ? finding : describeFeedFinding(finding));
  try {
    // A wrong folder, prefix or bucket is an error, not "nothing to verify" (which is for a mirror with no feed yet).
    await requireMirror(stores.mirror, false);
    if (options.repair && options.bucket === undefined) await checkDataDir(resolve(options.dataDir), 'write');
    const target = {
      storage: stores.storage,
      mirror: stores.mirror,
      cursors: stores.cursors,
      concurrency: settings.concurrency,
      ...(settings.idFilter === undefined ? {} : { idFilter: settings.idFilter }),
    };
    const { summary, drift } = await auditFeed(target, { onFinding });
    let unrepaired = summary.drifted;
    let counts: FeedCounts | undefined;
    if (options.repair && summary.drifted > 0 && summary.baseUrl !== null) {
      for (const origin of settings.allowedOrigins) http.allowOrigin(origin);
      http.useCredentialsOf(settings.source);
      counts = await repairFeed(
        {
          ...target,
          baseUrl: summary.baseUrl,
          http,
          source: settings.source,
          ...(options.packageBaseAddress === undefined ? {} : { packageBaseAddress: options.packageBaseAddress }),
        },
        drift,
      );
      // The repaired packages (and the service index) audited again: what still drifts is reported as not repaired.
      const again = await auditFeed(target, {
        ids: drift.keys(),
        onFinding: (finding) => {
          if (isDrift(finding))
            write(options.json ? { ...finding, unrepaired: true } : `not repaired: ${describeFeedFinding(finding)}`);
        },
      });
      unrepaired = again.summary.drifted;
    }
    write(
      options.json
        ? { kind: 'summary', ...summary, ...(counts === undefined ? {} : { repair: counts, unrepaired }) }
        : describeSummary(summary, stores.storage.where, counts, unrepaired),
    );
    if (unrepaired > 0) process.exitCode = ExitCode.runFailed;
  } catch (error) {
    if (error instanceof FeedError && error.setting === 'source')
      throw new SettingsError(options.packageBaseAddress ? '--package-base-address' : '--source', error.message, {
        cause: error,
      });
    throw error;
  } finally {
    stores.close();
    await http.close();
  }
}

function describeSummary(
  summary: FeedAuditSummary,
  where: string,
  repair: FeedCounts | undefined,
  unrepaired: number,
): string {
  if (summary.baseUrl === null) return `nothing to verify in ${where}: no feed (feed-state/settings.json is missing)`;
  if (summary.feedCursor === null) return `nothing to verify in ${where}: the feed consumer has no cursor yet`;
  const mb = (summary.hashedBytes / 1_000_000).toFixed(1);
  return (
    `verified the feed in ${where} (${summary.baseUrl}) up to ${summary.feedCursor}: ${summary.packages} packages, ${summary.versions} versions, ${summary.hashed} packages hashed (${mb} MB), in ${(summary.durationMs / 1000).toFixed(1)} s` +
    `${summary.pending > 0 ? `; ${summary.pending} packages pending (the view moved past the feed's cursor)` : ''}\n` +
    `${summary.drifted === 0 ? 'no drift' : `${summary.drifted} findings of drift in ${summary.driftedPackages} packages`}, ${summary.waiting} waiting for the source, ${summary.quarantined} quarantined` +
    `${repair === undefined ? '' : `; repaired: ${repair.stored} packages stored again, ${repair.documents} documents written, ${repair.removed} removed; ${unrepaired} findings not repaired`}`
  );
}
