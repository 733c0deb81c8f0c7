/**
 * The app's configuration, read from CDK context: `cdk.json` holds the defaults, `cdk deploy -c key=value`
 * overrides any of them. Keys are flat (`catalog-sync:<setting>`, and `catalog-sync:second:<setting>` for an
 * optional second sync) because `-c` only sets top-level keys, and values given with `-c` arrive as strings:
 * every reader accepts both the JSON type and its text.
 */
import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { CatalogSyncError, DEFAULT_CURSOR_NAME, ErrorCode } from '../lambda/contract/index.js';
import type { CatalogSyncProps } from './catalog-sync-props.js';

/** Prefix of every context key of this app. */
export const CONTEXT_PREFIX = 'catalog-sync:';
/** Prefix of the second sync's keys (after CONTEXT_PREFIX). */
export const SECOND_PREFIX = 'second:';

/** What the app deploys. */
export interface AppConfig {
  /** CloudFormation stack name. */
  readonly stackName: string;
  /** E-mail addresses subscribed to a topic created for the alarms. */
  readonly alarmEmails: readonly string[];
  /** An existing SNS topic for the alarms (instead of, or besides, the e-mail topic). */
  readonly alarmTopicArn?: string;
  /** The first (or only) sync. */
  readonly first: CatalogSyncProps;
  /** An optional second sync, sharing the first one's table (and bucket unless `ownBucket`). */
  readonly second?: CatalogSyncProps & { readonly ownBucket: boolean };
  /** A CatalogBackfill of the first sync's cursor, sharing its table, bucket and settings (`catalog-sync:backfill`). */
  readonly backfill: boolean;
  /** The first sync's latest view and its rebuild on Step Functions (`catalog-sync:view-rebuild`: `view` and `viewRebuild`). */
  readonly viewRebuild: boolean;
}

/** A context value that cannot be used. The message names the key. */
export class ContextError extends CatalogSyncError {
  override readonly name = 'ContextError';
  override get code(): ErrorCode {
    return ErrorCode.context;
  }
}

type Raw = (key: string) => unknown;

/** Reads the app configuration from the context of `node` (the App's node). */
export function appConfigFromContext(node: Node): AppConfig {
  const read = new Set<string>();
  const get: Raw = (key) => {
    read.add(key);
    return node.tryGetContext(CONTEXT_PREFIX + key);
  };
  const config = readConfig(get);
  refuseUnknownKeys(node, read, config.second !== undefined);
  return config;
}

/**
 * A misspelt key (`-c catalog-sync:memorySize=1769`) would otherwise be ignored without a word, and the
 * stack deployed with the default: every key under {@link CONTEXT_PREFIX} must be one this app reads.
 */
function refuseUnknownKeys(node: Node, read: ReadonlySet<string>, hasSecond: boolean): void {
  const syncKeys = new Set<string>();
  syncProps((key) => void syncKeys.add(key), '');
  const known = [...new Set([...read].filter((key) => !key.startsWith(SECOND_PREFIX))), ...syncKeys].sort();
  for (const fullName of Object.keys(node.getAllContext() as Record<string, unknown>).sort()) {
    if (!fullName.startsWith(CONTEXT_PREFIX)) continue;
    const key = fullName.slice(CONTEXT_PREFIX.length);
    if (read.has(key)) continue;
    const inSecond = key.startsWith(SECOND_PREFIX) ? key.slice(SECOND_PREFIX.length) : undefined;
    if (inSecond !== undefined && !hasSecond && (syncKeys.has(inSecond) || inSecond === 'ownBucket')) {
      throw new ContextError(
        `${fullName}: there is no second sync; set ${CONTEXT_PREFIX}${SECOND_PREFIX}cursorName to add one`,
      );
    }
    const candidates = inSecond === undefined ? known : [...syncKeys, 'ownBucket'].map((name) => SECOND_PREFIX + name);
    const closest = nearest(key, candidates);
    throw new ContextError(
      `${fullName}: not a setting of this app${closest ? `; did you mean ${CONTEXT_PREFIX}${closest}?` : ''} (see README, Deploy)`,
    );
  }
}

/** The candidate closest to `word` by edit distance, if it is close enough to be a likely typo. */
function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(word.length / 2)) ? best.candidate : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

function readConfig(get: Raw): AppConfig {
  const first = syncProps(get, '');
  const secondName = text(get, `${SECOND_PREFIX}cursorName`);
  let second: AppConfig['second'];
  if (secondName !== undefined) {
    const props = syncProps(get, SECOND_PREFIX);
    const firstName = first.cursorName ?? DEFAULT_CURSOR_NAME;
    const source = props.source ?? first.source;
    const allowedOrigins = props.allowedOrigins ?? first.allowedOrigins;
    // The first one's feed credentials go with its source, and only with it.
    const sameSource = props.source === undefined;
    const sourceSecret = props.sourceSecret ?? (sameSource ? first.sourceSecret : undefined);
    const sourceSecretKeyArn =
      props.sourceSecretKeyArn ??
      (sameSource && props.sourceSecret === undefined ? first.sourceSecretKeyArn : undefined);
    second = {
      ...props,
      // The point of a second sync in one app: it follows the first one's cursor, never passing it, so it
      // reads the same catalog unless told otherwise.
      dependsOn: props.dependsOn ?? [firstName],
      ...(source === undefined ? {} : { source }),
      ...(allowedOrigins === undefined ? {} : { allowedOrigins }),
      ...(sourceSecret === undefined ? {} : { sourceSecret }),
      ...(sourceSecretKeyArn === undefined ? {} : { sourceSecretKeyArn }),
      // Sharing the first one's bucket: its own prefix, named after its cursor.
      prefix: props.prefix ?? `${secondName}/`,
      ownBucket: flag(get, `${SECOND_PREFIX}ownBucket`) ?? false,
    };
  }
  const alarmTopicArn = text(get, 'alarmTopicArn');
  return {
    stackName: text(get, 'stackName') ?? 'CatalogSync',
    alarmEmails: list(get, 'alarmEmails') ?? [],
    backfill: flag(get, 'backfill') ?? false,
    viewRebuild: flag(get, 'view-rebuild') ?? false,
    ...(alarmTopicArn === undefined ? {} : { alarmTopicArn }),
    first,
    ...(second ? { second } : {}),
  };
}

/** The construct's props of one sync, from the keys under `scope`. Unset keys keep the construct's defaults. */
function syncProps(get: Raw, scope: string): CatalogSyncProps {
  const key = (name: string) => scope + name;
  const props: Record<string, unknown> = {
    source: text(get, key('source')),
    sourceSecret: text(get, key('sourceSecret')),
    sourceSecretKeyArn: text(get, key('sourceSecretKeyArn')),
    cursorName: text(get, key('cursorName')),
    dependsOn: list(get, key('dependsOn')),
    prefix: text(get, key('prefix'), true),
    startCursor: text(get, key('startCursor')),
    maxCommits: whole(get, key('maxCommits')),
    maxLeaves: whole(get, key('maxLeaves')),
    concurrency: whole(get, key('concurrency')),
    quarantine: flag(get, key('quarantine')),
    allowedOrigins: list(get, key('allowedOrigins')),
    runLogDays: whole(get, key('runLogDays')),
    schedule: minutes(get, key('scheduleMinutes')),
    enabled: flag(get, key('enabled')),
    memorySize: whole(get, key('memoryMb')),
    timeout: seconds(get, key('timeoutSeconds')),
    reservedConcurrency: whole(get, key('reservedConcurrency')),
    logRetention: retention(get, key('logRetentionDays')),
    maxEventAge: seconds(get, key('maxEventAgeSeconds')),
    lagThreshold: minutes(get, key('lagAlarmMinutes')),
    lagAlarmPeriods: whole(get, key('lagAlarmPeriods')),
    missedRunPeriods: whole(get, key('missedRunPeriods')),
    commitEvents: flag(get, key('commitEvents')),
    dashboard: flag(get, key('dashboard')),
    // `-c catalog-sync:feed=true`: the feed with its defaults (CloudFront in front of {prefix}feed/, its writer).
    feed: flag(get, key('feed')) ? {} : undefined,
  };
  for (const name of Object.keys(props)) if (props[name] === undefined) delete props[name];
  return props as CatalogSyncProps;
}

const fullKey = (key: string) => CONTEXT_PREFIX + key;

/** Unset: absent, null or blank. `keepEmpty` keeps '' for settings where empty means something (prefix). */
function text(get: Raw, key: string, keepEmpty = false): string | undefined {
  const value = get(key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new ContextError(`${fullKey(key)}: ${JSON.stringify(value)} must be text`);
  const result = String(value).trim();
  return result === '' && !keepEmpty ? undefined : result;
}

function list(get: Raw, key: string): string[] | undefined {
  const value = get(key);
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value))
    return value
      .map(String)
      .map((item) => item.trim())
      .filter((item) => item !== '');
  if (typeof value !== 'string')
    throw new ContextError(`${fullKey(key)}: ${JSON.stringify(value)} must be a list or comma-separated text`);
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function whole(get: Raw, key: string): number | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < 0)
    throw new ContextError(`${fullKey(key)}: ${JSON.stringify(value)} must be a whole number`);
  return number;
}

function flag(get: Raw, key: string): boolean | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  const lower = String(value).trim().toLowerCase();
  if (lower === 'true' || lower === '1' || lower === 'yes') return true;
  if (lower === 'false' || lower === '0' || lower === 'no') return false;
  throw new ContextError(`${fullKey(key)}: ${JSON.stringify(value)} must be true or false`);
}

function minutes(get: Raw, key: string): Duration | undefined {
  const value = whole(get, key);
  return value === undefined ? undefined : Duration.minutes(value);
}

function seconds(get: Raw, key: string): Duration | undefined {
  const value = whole(get, key);
  return value === undefined ? undefined : Duration.seconds(value);
}

function retention(get: Raw, key: string): RetentionDays | undefined {
  const value = whole(get, key);
  if (value === undefined) return undefined;
  const allowed = Object.values(RetentionDays).filter((days): days is number => typeof days === 'number');
  if (!allowed.includes(value))
    throw new ContextError(
      `${fullKey(key)}: ${value} must be one of CloudWatch Logs' retention periods: ${allowed.join(', ')}`,
    );
  return value as RetentionDays;
}
