import { describe, expect, it } from 'vitest';
import { FLAG_NAMES } from '../../lambda/runtime/cli/options.js';
import { safetyMarginMs } from '../../lambda/runtime/deadline.js';
import { lambdaSettings } from '../../lambda/runtime/lambda-settings.js';
import { parseTimestamp } from '../../lambda/contract/time.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_COMMITS,
  DEFAULT_MAX_LEAVES,
  parseSettings,
  SettingsError,
  type RawSettings,
} from '../../lambda/contract/settings.js';

describe('settings', () => {
  it('has the documented defaults', () => {
    expect(parseSettings({})).toEqual({
      source: 'https://api.nuget.org/v3/index.json',
      cursorName: 'catalog-to-s3',
      dependsOn: [],
      prefix: '',
      startCursor: 0n,
      maxCommits: DEFAULT_MAX_COMMITS,
      maxLeaves: DEFAULT_MAX_LEAVES,
      concurrency: DEFAULT_CONCURRENCY,
      quarantine: false,
      allowedOrigins: [],
    });
  });

  it('reads every setting', () => {
    const settings = parseSettings({
      CATALOG_SOURCE: 'http://127.0.0.1:9000/v3/catalog0/index.json',
      CURSOR_NAME: 'search',
      DEPENDS_ON: ' metadata , content ',
      SNAPSHOT_PREFIX: 'mirror/',
      START_CURSOR: '2017-10-31T23:28:02.788239Z',
      MAX_COMMITS: '10',
      MAX_LEAVES: '100',
      CONCURRENCY: '8',
      QUARANTINE: 'TRUE',
      ALLOWED_ORIGINS: 'https://cdn.example.org,https://other.example.org:8443',
    });
    expect(settings).toEqual({
      source: 'http://127.0.0.1:9000/v3/catalog0/index.json',
      cursorName: 'search',
      dependsOn: ['metadata', 'content'],
      prefix: 'mirror/',
      startCursor: parseTimestamp('2017-10-31T23:28:02.7882390Z'),
      maxCommits: 10,
      maxLeaves: 100,
      concurrency: 8,
      quarantine: true,
      allowedOrigins: ['https://cdn.example.org', 'https://other.example.org:8443'],
    });
  });

  const bad: [keyof RawSettings, string, RegExp][] = [
    ['CATALOG_SOURCE', 'not a url', /not a URL/],
    ['CATALOG_SOURCE', 'file:///etc/passwd', /http or https/],
    ['CURSOR_NAME', 'a/b', /A-Z a-z 0-9/],
    ['CURSOR_NAME', '-leading', /start with a letter or digit/],
    ['DEPENDS_ON', 'ok,bad name', /A-Z a-z 0-9/],
    ['DEPENDS_ON', 'catalog-to-s3', /cannot depend on itself/],
    ['SNAPSHOT_PREFIX', '/abs', /must not start with/],
    ['SNAPSHOT_PREFIX', 'a/../b', /must not start with/],
    ['SNAPSHOT_PREFIX', `${'p'.repeat(61)}/é/`, /is 65 bytes of UTF-8; at most 64 keep every key below 1,024 bytes/],
    ['START_CURSOR', '2017-10-31T23:30:32', /invalid timestamp/],
    ['START_CURSOR', '2017-02-30T00:00:00Z', /day 30 is out of range/],
    ['MAX_COMMITS', '0', /whole number from 1/],
    ['MAX_LEAVES', '1.5', /whole number from 1/],
    ['CONCURRENCY', '5000', /whole number from 1 to 1024/],
    ['QUARANTINE', 'maybe', /true or false/],
    ['ALLOWED_ORIGINS', 'https://cdn.example.org/path', /origin only/],
    ['ALLOWED_ORIGINS', 'https://me:hunter2@cdn.example.org', /without credentials/],
    ['CATALOG_SOURCE', 'http://me:hunter2@feed.example/v3/index.json', /sent over https only/],
    ['CATALOG_SOURCE', 'https://me:hunter2%zz@feed.example/v3/index.json', /not valid percent-encoding/],
  ];
  for (const [name, value, reason] of bad) {
    it(`${name}=${JSON.stringify(value)} fails naming ${name}, and the CLI flag in the CLI`, () => {
      const attempt = (names?: typeof FLAG_NAMES) => () => parseSettings({ [name]: value }, names);
      expect(attempt()).toThrow(SettingsError);
      expect(attempt()).not.toThrow(/hunter2/);
      expect(attempt()).toThrow(new RegExp(`^${name}: `));
      expect(attempt()).toThrow(reason);
      expect(attempt(FLAG_NAMES)).toThrow(new RegExp(`^${FLAG_NAMES[name]}: `));
    });
  }

  it('a source with credentials is taken over https, or over http to this machine', () => {
    for (const source of [
      'https://me:hunter2@feed.example/v3/index.json',
      'http://me:hunter2@127.0.0.1:9000/v3/index.json',
      'http://me@localhost/v3/index.json',
    ]) {
      expect(parseSettings({ CATALOG_SOURCE: source }).source).toBe(source);
    }
  });

  it('the Lambda requires its table and bucket, and a sane run-log TTL', () => {
    expect(() => lambdaSettings({ SNAPSHOT_BUCKET: 'b' })).toThrow(/^CURSOR_TABLE: /);
    expect(() => lambdaSettings({ CURSOR_TABLE: 't' })).toThrow(/^SNAPSHOT_BUCKET: /);
    expect(() => lambdaSettings({ CURSOR_TABLE: 't', SNAPSHOT_BUCKET: 'b', RUN_LOG_DAYS: '0' })).toThrow(
      /^RUN_LOG_DAYS: /,
    );
    expect(lambdaSettings({ CURSOR_TABLE: 't', SNAPSHOT_BUCKET: 'b' })).toMatchObject({
      table: 't',
      bucket: 'b',
      runLogDays: 30,
    });
  });

  it('keeps back a fifth of the Lambda time, between 5 and 30 seconds', () => {
    expect(safetyMarginMs(900_000)).toBe(30_000);
    expect(safetyMarginMs(60_000)).toBe(12_000);
    expect(safetyMarginMs(10_000)).toBe(5_000);
  });
});
