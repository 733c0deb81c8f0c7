import type { Command } from 'commander';
import { CatalogClient, HttpClient } from '../../catalog/index.js';
import { DEFAULT_CONCURRENCY, parseSettings, SettingsError, type Ticks } from '../../contract/index.js';
import { auditMirror, type AuditFinding, type AuditSummary } from '../audit.js';
import { repairCommits } from '../audit-repair.js';
import { readIdFilterRecord } from '../../sync/filter-record.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { withFolderSource } from '../../runtime/cli/folder-source.js';
import { openStores } from '../../runtime/cli/open-stores.js';
import { collect, FLAG_NAMES, rawSettingsOf } from '../../runtime/cli/options.js';
import { storeOptions } from '../../runtime/cli/store-options.js';
import { parseTimeFlag } from '../../runtime/cli/time-flags.js';
import { verboseHooks, verboseOption } from '../../sync/cli/verbose.js';
import { refuseFeedFlags, verifyFeedCommand, type VerifyFeedOptions } from './verify-feed.js';

/** Options of `catalog-sync verify`. */
interface VerifyOptions extends VerifyFeedOptions {
  feed?: boolean;
}

/** Commits listed and compared at once in a bucket (a folder: all at once, since its listing reads the whole tree). */
const WINDOW_COMMITS = 2_000;

/** `catalog-sync verify`: audits the mirror against the catalog, and with --repair stores what is missing. */
export function addVerifyCommand(program: Command): void {
  verboseOption(storeOptions(program.command('verify')))
    .description(
      'audit the mirror against the catalog: every manifest and leaf up to the watermark (bodies too with --deep); --repair stores what is missing',
    )
    .option('--since <timestamp>', 'audit commits from this time (default: from the start)')
    .option('--until <timestamp>', 'audit commits up to this time (default: the cursor; never past watermark.json)')
    .option(
      '--deep',
      'also compare every stored leaf with the catalog byte for byte, and each manifest with its page items',
      false,
    )
    .option('--sample <n>', 'with --deep: about n leaves chosen at random instead of all')
    .option(
      '--repair',
      'store each incomplete commit again with the normal pipeline (same keys and bytes); the cursor never moves',
      false,
    )
    .option('--quarantine', 'with --repair: set aside a leaf that keeps failing, as run --quarantine does', false)
    .option('--concurrency <n>', `listings and leaf reads at once (default ${DEFAULT_CONCURRENCY})`)
    .option('--allow-origin <origin>', 'another origin leaves or pages may come from (repeatable)', collect)
    .option('--json', 'one JSON line per finding, then the summary as one JSON line', false)
    .option(
      '--feed',
      "audit the private feed (feed/) against the mirror's latest view and leaves instead: versions missing, extra or shown otherwise, and packages whose bytes are not their leaf's hash; --repair makes them again",
      false,
    )
    .option('--include <glob>', 'with --feed: the ids the feed holds, as given to feed --include (repeatable)', collect)
    .option(
      '--exclude <glob>',
      'with --feed: the ids the feed leaves out, as given to feed --exclude (repeatable)',
      collect,
    )
    .option('--package-base-address <url>', 'with --feed --repair: where the source serves packages, as given to feed')
    .addHelpText(
      'after',
      `
One line per finding (missing manifest, missing leaf, body differs, manifest differs, quarantined), then a
summary. Exit 1 when anything is missing or differs (after --repair: anything it could not repair), else 0.
With --feed: one line per drifted package version (version missing, version extra, version differs, package
missing, package differs, vulnerabilities), with the same exit codes.

Examples:
  catalog-sync verify
  catalog-sync verify --deep --sample 1000
  catalog-sync verify --since 2024-01-01 --repair --cursor-table cursors --bucket my-mirror
  catalog-sync verify --feed --repair --include 'Contoso.*'`,
    )
    .action(verifyCommand);
}

async function verifyCommand(asked: VerifyOptions, command: Command): Promise<void> {
  if (asked.feed) return verifyFeedCommand(asked);
  refuseFeedFlags(asked);
  const options = await withFolderSource(asked, command);
  const since = options.since === undefined ? undefined : parseTimeFlag('--since', options.since);
  const until = options.until === undefined ? undefined : parseTimeFlag('--until', options.until);
  let sample: number | undefined;
  if (options.sample !== undefined) {
    if (!/^\d+$/.test(options.sample) || Number(options.sample) < 1)
      throw new SettingsError(
        '--sample',
        `${JSON.stringify(options.sample)} must be a whole number of leaves, at least 1`,
      );
    if (!options.deep) throw new SettingsError('--sample', 'samples the leaves --deep compares: give --deep too');
    sample = Number(options.sample);
  }
  const given = parseSettings(
    {
      ...rawSettingsOf(options),
      CONCURRENCY: options.concurrency,
      QUARANTINE: options.quarantine,
      ALLOWED_ORIGINS: options.allowOrigin,
    },
    FLAG_NAMES,
  );
  const stores = await openStores(options, given.concurrency, process.env, options.repair ? 'write' : 'read');
  // A filtered mirror is audited (and repaired) under its own filter: what it left out is not missing. Commits
  // before a change of filter are judged by the filter their manifests were written under.
  const filters = await readIdFilterRecord(stores.snapshots, given.prefix);
  const settings = filters.current === undefined ? given : { ...given, idFilter: filters.current };
  const http = new HttpClient({ connections: settings.concurrency });
  const verbose = verboseHooks(options.verbose, http);
  const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
  const local = options.cursorTable === undefined;
  const broken = new Set<Ticks>();
  try {
    const summary = await auditMirror(
      settings,
      { catalog, cursors: verbose.cursors(stores.cursors), snapshots: stores.snapshots },
      {
        ...(since === undefined ? {} : { since }),
        ...(until === undefined ? {} : { until }),
        deep: options.deep === true,
        ...(sample === undefined ? {} : { sample }),
        listRanges: local ? 1 : settings.concurrency,
        windowCommits: local ? Number.POSITIVE_INFINITY : WINDOW_COMMITS,
        concurrency: settings.concurrency,
        filterHistory: filters.history,
        onFinding: (finding, commit) => {
          if (finding.kind !== 'quarantined' && finding.kind !== 'unverifiable') broken.add(commit.ticks);
          process.stdout.write(options.json ? `${JSON.stringify(finding)}\n` : `${describeFinding(finding)}\n`);
        },
      },
    );
    let unrepaired = broken.size;
    if (options.repair && broken.size > 0) {
      const outcomes = await repairCommits(
        settings,
        { catalog, snapshots: stores.snapshots },
        [...broken].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      );
      unrepaired = 0;
      for (const outcome of outcomes) {
        if (outcome.error !== undefined) unrepaired++;
        if (options.json)
          process.stdout.write(
            `${JSON.stringify({ kind: outcome.error === undefined ? 'repaired' : 'repair-failed', ...outcome })}\n`,
          );
        else
          process.stdout.write(
            outcome.error === undefined
              ? `repaired         commit ${outcome.commit}: ${outcome.leaves} leaves stored again, and its manifest\n`
              : `repair failed    commit ${outcome.commit}: ${outcome.error}\n`,
          );
      }
    }
    if (options.json)
      process.stdout.write(
        `${JSON.stringify({ kind: 'summary', ...summary, repaired: options.repair ? broken.size - unrepaired : 0 })}\n`,
      );
    else
      process.stdout.write(
        `${describeSummary(summary, stores.where, options.repair ? broken.size - unrepaired : undefined)}\n`,
      );
    if (unrepaired > 0) process.exitCode = ExitCode.runFailed;
  } finally {
    stores.close();
    await http.close();
  }
}

function describeFinding(finding: AuditFinding): string {
  switch (finding.kind) {
    case 'missing-manifest':
      return `missing manifest ${finding.key} (commit ${finding.commit}, ${finding.commitId})`;
    case 'missing-leaf':
      return `missing leaf     ${finding.key} (commit ${finding.commit}; ${finding.url})`;
    case 'body-differs':
      return `body differs     ${finding.key} (stored ${finding.storedBytes} bytes, the catalog's ${finding.catalogBytes}; ${finding.url})`;
    case 'manifest-differs':
      return `manifest differs ${finding.key} (commit ${finding.commit}): ${finding.reason}`;
    case 'quarantined':
      return `quarantined      ${finding.key} (commit ${finding.commit}; ${finding.url}): set aside, see catalog-sync quarantine`;
    case 'unverifiable':
      return `not compared     ${finding.key} (commit ${finding.commit}): the catalog's copy could not be read: ${finding.reason}`;
  }
}

function describeSummary(summary: AuditSummary, where: string, repaired: number | undefined): string {
  if (summary.cursor === null) return `nothing to verify in ${where}: no cursor yet`;
  const missing = summary.missingManifests + summary.missingLeaves;
  const range = `${summary.from} -> ${summary.to}${summary.watermark !== null && summary.watermark !== summary.cursor && summary.to === summary.watermark ? ` (the watermark; the cursor is at ${summary.cursor})` : ''}`;
  return (
    `verified ${where}: ${summary.commits} commits, ${summary.leaves} leaves, ${range}, in ${(summary.durationMs / 1000).toFixed(1)} s (${summary.leavesPerSecond} leaves/s)` +
    `${summary.compared > 0 ? `; ${summary.compared} bodies compared byte for byte` : ''}\n` +
    `${missing === 0 && summary.differ === 0 ? 'nothing missing' : `${summary.missingManifests} manifests and ${summary.missingLeaves} leaves missing, ${summary.differ} differ`}` +
    `, ${summary.quarantined} quarantined${summary.unverifiable > 0 ? `, ${summary.unverifiable} not compared` : ''}${repaired === undefined ? '' : `; ${repaired} commits repaired`}` +
    `${summary.underEarlierFilter > 0 ? `\n${summary.underEarlierFilter} commits were written under an earlier id filter (filter.json's history) and judged by it` : ''}`
  );
}
