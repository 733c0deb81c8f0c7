/**
 * File names of the embedded default. On a case-insensitive file system (forced here: the test machines have
 * none) keys differing only in case, like the commit keys `001e9fzMHc3F` and `001e9fzmHc3F` 26 s apart, must
 * stay distinct files, and every command still reports the S3 key. The mode is recorded at first use and
 * kept. And every file outside the state folder is a key, even one whose id contains `.tmp-`.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leafKey, manifestKey, quarantineKey } from '../../lambda/contract/keys.js';
import { commitKeyOf } from '../../lambda/contract/keys.js';
import { FORCE_CASE_INSENSITIVE_ENV, openStores } from '../../lambda/runtime/cli/open-stores.js';
import sanitize from 'sanitize-filename';
import { FILE_NAMES_RECORD, FileNameModeError, resolveFileNameMode } from '../../lambda/stores/file-name-mode.js';
import { fileNamesOf, keyOfFileNames } from '../../lambda/stores/local-paths.js';
import { SettingsError } from '../../lambda/contract/settings.js';
import { LocalStore, STATE_DIR } from '../../lambda/stores/index.js';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { runCli } from '../../testkit/cli-process.js';
import { listFiles } from '../../testkit/local-verify.js';

const UPPER = '001e9fzMHc3F';
const LOWER = '001e9fzmHc3F';
const FORCED = { [FORCE_CASE_INSENSITIVE_ENV]: '1' };
const RECORD = `${STATE_DIR}/${FILE_NAMES_RECORD}`;

let root: string;
let dirs = 0;
let catalog: GeneratedCatalog;
let replica: CatalogReplica;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'catalog-sync-file-names-'));
  // Two commits whose keys differ only in case: 26 s is one step of the last seconds digit, `M` to `m`.
  const first = generateCatalog({
    commits: 1,
    seed: 5,
    start: '2017-10-31T23:30:32.4197849Z',
    leavesPerCommit: [2, 2],
    deleteRatio: 0,
  });
  const second = generateCatalog({
    commits: 1,
    seed: 6,
    start: '2017-10-31T23:30:58.4197849Z',
    leavesPerCommit: [2, 2],
    deleteRatio: 0,
  });
  catalog = { commits: [...first.commits, ...second.commits] };
  // The same package in both commits: on a case-insensitive file system its two leaves would be one file.
  const [again, tmpLike] = catalog.commits[1]!.leaves;
  again!.id = catalog.commits[0]!.leaves[0]!.id;
  again!.version = catalog.commits[0]!.leaves[0]!.version;
  tmpLike!.id = 'X.tmp-Y';
  replica = await CatalogReplica.start({ catalog, pageSize: 10 });
});
afterAll(async () => {
  await replica?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

function newDir(name: string): string {
  return join(root, `${name}-${++dirs}`);
}

async function keysOf(store: LocalStore, prefix = '', startAfter?: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.listKeys(prefix, startAfter)) keys.push(key);
  return keys;
}

/** A write of a manifest key: it makes the folder record its mode. */
function putIn(store: LocalStore): Promise<void> {
  return store.putJson(`commits/${LOWER}.json`, {});
}

/** The files outside the state folder. */
async function snapshotFiles(dir: string): Promise<string[]> {
  return (await listFiles(dir)).filter((file) => !file.startsWith(`${STATE_DIR}/`));
}

describe('LocalStore file names', () => {
  it('on a case-insensitive folder keeps keys differing only in case apart, lists the S3 keys, and keeps the mode', async () => {
    const dir = newDir('escaped');
    const store = new LocalStore(dir, { caseInsensitive: true });
    const keys = [
      `commits/${UPPER}.json`,
      `commits/${LOWER}.json`,
      `leaves/${UPPER}/newtonsoft.json/1.0.0.json`,
      `leaves/${LOWER}/newtonsoft.json/1.0.0.json`,
      `quarantine/${UPPER}/caf%C3%A9/1.0.0-rc.json`,
    ];
    for (const key of keys) await store.putJson(key, { key });

    expect(await readFile(join(dir, RECORD), 'utf8')).toBe('{"fileNames":"portable"}\n');
    const files = await snapshotFiles(dir);
    expect(files).toEqual(keys.map((key) => fileNamesOf(key, 'portable').join('/')).sort());
    expect(files).toContain('commits/001e9fz^m^hc3^f.json');
    expect(new Set(files.map((file) => file.toLowerCase())).size).toBe(keys.length);

    // Files catalog-sync never writes under escaped names are not keys.
    await writeFile(join(dir, '.DS_Store'), '');
    await writeFile(join(dir, 'commits', 'Thumbs.db'), '');
    expect(await keysOf(store)).toEqual([...keys].sort());
    expect(await keysOf(store, 'commits/', `commits/${UPPER}.json`)).toEqual([`commits/${LOWER}.json`]);
    for (const key of keys) expect(await store.getJson(key)).toEqual({ key });

    // Opened again where the probe finds a case-sensitive file system (a copy on Linux): still portable.
    const reopened = new LocalStore(dir);
    expect(await keysOf(reopened, 'leaves/')).toEqual([keys[2], keys[3]]);
    await reopened.deleteKey(keys[2]!);
    expect(await reopened.getJson(keys[2]!)).toBeUndefined();
    expect(await reopened.getJson(keys[3]!)).toEqual({ key: keys[3] });
  });

  it('a folder made exact, or filled before the mode was recorded, is refused on a case-insensitive file system', async () => {
    // Made here, where the probe finds a case-sensitive file system: recorded exact, the probe file removed.
    const exact = newDir('exact');
    await new LocalStore(exact).putJson(`commits/${UPPER}.json`, {});
    expect(await readFile(join(exact, RECORD), 'utf8')).toBe('{"fileNames":"exact"}\n');
    expect(await listFiles(exact)).toEqual([RECORD, `commits/${UPPER}.json`].sort());

    const moved = new LocalStore(exact, { caseInsensitive: true });
    for (const attempt of [() => keysOf(moved), () => moved.putJson(`commits/${LOWER}.json`, {})]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileNameModeError);
      expect((error as Error).message).toContain(
        `${exact}: this folder stores keys as exact file names (${join(exact, RECORD)} says "exact"`,
      );
    }
    expect(await snapshotFiles(exact)).toEqual([`commits/${UPPER}.json`]);

    // Filled by a catalog-sync that recorded nothing: refused there; read as exact here, and recorded by the first
    // write (a read writes nothing).
    const older = newDir('older');
    await mkdir(join(older, 'commits'), { recursive: true });
    await writeFile(join(older, 'commits', `${UPPER}.json`), '{}');
    await expect(keysOf(new LocalStore(older, { caseInsensitive: true }))).rejects.toThrow(
      `${older}: this folder was filled by a catalog-sync that stored keys as exact file names`,
    );
    await expect(putIn(new LocalStore(older, { caseInsensitive: true }))).rejects.toThrow(
      `${older}: this folder was filled by a catalog-sync that stored keys as exact file names`,
    );
    await expect(stat(join(older, RECORD))).rejects.toThrow();
    expect(await keysOf(new LocalStore(older))).toEqual([`commits/${UPPER}.json`]);
    await expect(stat(join(older, RECORD))).rejects.toThrow();
    await putIn(new LocalStore(older));
    expect(await readFile(join(older, RECORD), 'utf8')).toBe('{"fileNames":"exact"}\n');

    // A record that says neither.
    await writeFile(join(older, RECORD), '{"fileNames":"lower"}');
    await expect(keysOf(new LocalStore(older))).rejects.toThrow(
      `${join(older, RECORD)}: "fileNames" is "lower"; expected "exact", "portable" or "escaped"`,
    );
  });

  it('reading a folder writes nothing in it: no record, no probe, no state folder', async () => {
    for (const caseInsensitive of [false, true]) {
      const dir = newDir('read-only');
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'Notes.txt'), 'not a mirror');
      const store = new LocalStore(dir, { caseInsensitive });
      await keysOf(store);
      expect(await store.getBytes(`commits/${UPPER}.json`)).toBeUndefined();
      expect(await readdir(dir)).toEqual(['Notes.txt']);
    }
  });

  it('reading a folder that does not exist finds nothing and creates nothing', async () => {
    const dir = newDir('absent');
    const store = new LocalStore(dir, { caseInsensitive: true });
    expect(await keysOf(store)).toEqual([]);
    expect(await store.getJson(`commits/${UPPER}.json`)).toBeUndefined();
    await store.deleteKey(`commits/${UPPER}.json`);
    await expect(stat(dir)).rejects.toThrow();
  });
});

describe('catalog-sync with a folder on a case-insensitive file system (forced)', () => {
  it('stores every manifest and leaf of two commits whose keys differ only in case; quarantine, retry-quarantine and keys print S3 keys', async () => {
    const dir = newDir('cli-escaped');
    const common = ['--source', replica.serviceIndexUrl, '--data-dir', dir];
    const [c1, c2] = catalog.commits;
    expect([commitKeyOf(c1!.timestamp), commitKeyOf(c2!.timestamp)]).toEqual([UPPER, LOWER]);
    const failing = c1!.leaves[1]!;
    try {
      replica.failWith(failing.path, 500, 1_000);
      const run = await runCli(['run', ...common, '--quarantine', '--json'], FORCED);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toMatchObject({ commits: 2, leaves: 3, quarantined: 1, stoppedBy: 'caught-up' });

      const expected = [
        manifestKey('', UPPER),
        manifestKey('', LOWER),
        leafKey('', UPPER, c1!.leaves[0]!.id, c1!.leaves[0]!.version),
        quarantineKey('', UPPER, failing.id, failing.version),
        ...c2!.leaves.map((leaf) => leafKey('', LOWER, leaf.id, leaf.version)),
        'watermark.json',
      ].sort();
      const files = await snapshotFiles(dir);
      expect(new Set(files.map((file) => file.toLowerCase())).size).toBe(expected.length);
      expect(files.map((file) => keyOfFileNames(file.split('/'), 'portable')).sort()).toEqual(expected);
      const read = (key: string): Promise<string> => readFile(join(dir, ...fileNamesOf(key, 'portable')), 'utf8');
      for (const [key, commit] of [
        [UPPER, c1!],
        [LOWER, c2!],
      ] as const) {
        expect(JSON.parse(await read(manifestKey('', key)))).toMatchObject({ commitId: commit.commitId });
        for (const leaf of commit.leaves.filter((l) => l !== failing))
          expect(await read(leafKey('', key, leaf.id, leaf.version))).toBe(leafBody(catalog, leaf, replica.origin));
      }

      const listed = await runCli(['quarantine', ...common, '--json'], FORCED);
      expect(listed.code).toBe(0);
      expect(
        listed.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).key),
      ).toEqual([quarantineKey('', UPPER, failing.id, failing.version)]);
      const keys = await runCli(['keys', '--since', '2017-10-31T23:30:32Z'], FORCED);
      expect(keys.stdout).toBe('leaves/001e9fzM\n');

      replica.clearFaults();
      const retried = await runCli(['retry-quarantine', ...common], FORCED);
      expect(retried.stdout).toBe(
        `stored: ${quarantineKey('', UPPER, failing.id, failing.version)}\n1 stored, 0 still failing\n`,
      );
      expect(await read(leafKey('', UPPER, failing.id, failing.version))).toBe(
        leafBody(catalog, failing, replica.origin),
      );
      expect(JSON.stringify(JSON.parse(await read(manifestKey('', UPPER))))).not.toContain('quarantined');
      expect((await snapshotFiles(dir)).filter((file) => file.startsWith('quarantine/'))).toEqual([]);
    } finally {
      replica.clearFaults();
    }
  });
});

describe('ids that map to names Windows reserves (CON, nul.txt, COM1, a trailing dot), in a portable folder', () => {
  /** Windows' rules by a second implementation (sanitize-filename leaves a valid name as it is). */
  const windowsTakes = (file: string): boolean => file.split('/').every((name) => sanitize(name) === name);

  it('are stored under names Windows takes, and read back by changes, view and verify --deep', async () => {
    const reserved = generateCatalog({
      commits: 2,
      seed: 31,
      start: '2021-03-01T00:00:00Z',
      leavesPerCommit: [3, 3],
      deleteRatio: 0,
    });
    const ids = ['CON', 'nul.txt', 'Aux.Json', 'COM1', 'lpt9.core', 'Trailing.'];
    reserved.commits.flatMap((commit) => commit.leaves).forEach((leaf, i) => (leaf.id = ids[i]!));
    const source = await CatalogReplica.start({ catalog: reserved, pageSize: 10 });
    try {
      const dir = newDir('windows-names');
      const run = await runCli(['run', '--source', source.serviceIndexUrl, '--data-dir', dir, '--json'], FORCED);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toMatchObject({ commits: 2, leaves: 6, quarantined: 0, stoppedBy: 'caught-up' });
      expect(await readFile(join(dir, RECORD), 'utf8')).toBe('{"fileNames":"portable"}\n');
      const leafKeys = reserved.commits.flatMap((commit) =>
        commit.leaves.map((leaf) => leafKey('', commitKeyOf(commit.timestamp), leaf.id, leaf.version)),
      );
      expect(leafKeys.map((key) => key.split('/')[2])).toEqual([
        'con',
        'nul.txt',
        'aux.json',
        'com1',
        'lpt9.core',
        'trailing.',
      ]);

      // Every file a name Windows takes; the reserved ones marked (con^_, nul^_.txt, trailing.^_).
      const files = await snapshotFiles(dir);
      expect(files.filter((file) => !windowsTakes(file))).toEqual([]);
      expect(
        files
          .filter((file) => file.startsWith('leaves/'))
          .map((file) => file.split('/')[2])
          .sort(),
      ).toEqual(['aux^_.json', 'com1^_', 'con^_', 'lpt9^_.core', 'nul^_.txt', 'trailing.^_']);
      for (const [i, key] of leafKeys.entries()) {
        const leaf = reserved.commits.flatMap((commit) => commit.leaves)[i]!;
        expect(await readFile(join(dir, ...fileNamesOf(key, 'portable')), 'utf8')).toBe(
          leafBody(reserved, leaf, source.origin),
        );
      }

      // The consumer's reader, the latest view and verify read them back by their keys.
      const changes = await runCli(['changes', '--data-dir', dir, '--json', '--leaves'], FORCED);
      expect(changes.stderr).toBe('');
      expect(
        changes.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).key)
          .sort(),
      ).toEqual([...leafKeys].sort());
      const view = await runCli(['view', '--data-dir', dir, '--json'], FORCED);
      expect(view.code, view.stderr).toBe(0);
      const store = new LocalStore(dir);
      for (const id of ids)
        expect(await store.getJson(`packages/${id.toLowerCase()}/index.json`), id).toMatchObject({
          id: expect.any(String),
        });
      expect((await snapshotFiles(dir)).filter((file) => !windowsTakes(file))).toEqual([]);
      const verify = await runCli(['verify', '--source', source.serviceIndexUrl, '--data-dir', dir, '--deep'], FORCED);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    } finally {
      await source.stop();
    }
  });

  it('a folder escaped by an earlier version keeps its names (macOS holds con); on Windows it becomes portable, and a new folder there is portable', async () => {
    const layout = (dir: string, platform: NodeJS.Platform) => ({
      root: dir,
      stateDir: join(dir, STATE_DIR),
      stateDirName: STATE_DIR,
      stateFile: join(dir, STATE_DIR, 'state.json'),
      platform,
      writeAtomic: async (path: string, body: Buffer) => {
        await mkdir(join(path, '..'), { recursive: true });
        await writeFile(path, body);
      },
    });
    const earlier = newDir('earlier-escaped');
    await mkdir(join(earlier, STATE_DIR), { recursive: true });
    await writeFile(join(earlier, RECORD), '{"fileNames":"escaped"}\n');
    expect(await resolveFileNameMode(layout(earlier, 'darwin'))).toBe('escaped');
    expect(await readFile(join(earlier, RECORD), 'utf8')).toBe('{"fileNames":"escaped"}\n');
    // Its names as they were: the id con is the folder con, read back as the key.
    const store = new LocalStore(earlier);
    await store.putJson('leaves/001e9fzMHc3F/con/1.0.0.json', { id: 'CON' });
    expect(await snapshotFiles(earlier)).toEqual(['leaves/001e9fz^m^hc3^f/con/1.0.0.json']);
    expect(await keysOf(store)).toEqual(['leaves/001e9fzMHc3F/con/1.0.0.json']);
    // On Windows no earlier version could write a reserved name there: the folder is recorded portable.
    expect(await resolveFileNameMode(layout(earlier, 'win32'))).toBe('portable');
    expect(await readFile(join(earlier, RECORD), 'utf8')).toBe('{"fileNames":"portable"}\n');
    // A new folder on Windows is portable even where the probe finds a case-sensitive directory.
    const fresh = newDir('windows-fresh');
    expect(await resolveFileNameMode(layout(fresh, 'win32'))).toBe('portable');
    expect(await resolveFileNameMode(layout(newDir('linux-fresh'), 'linux'))).toBe('exact');
  });
});

describe(FORCE_CASE_INSENSITIVE_ENV, () => {
  it('takes "1" or "0"; anything else is a settings error naming it, before the folder is touched', async () => {
    const dir = newDir('env');
    const error = await openStores({ dataDir: dir }, 1, { [FORCE_CASE_INSENSITIVE_ENV]: 'yes' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as Error).message).toBe(
      `${FORCE_CASE_INSENSITIVE_ENV}: "yes" must be "1" or "0" (for tests only: take the file system as case-insensitive)`,
    );
    await expect(stat(dir)).rejects.toThrow();
  });
});

describe('a key whose id contains .tmp-', () => {
  it('is a key like any other: quarantine lists its record and retry-quarantine retries it', async () => {
    const dir = newDir('tmp-id');
    const common = ['--source', replica.serviceIndexUrl, '--data-dir', dir];
    const failing = catalog.commits[1]!.leaves[1]!;
    const recordKey = quarantineKey('', LOWER, failing.id, failing.version);
    expect(recordKey).toContain('/x.tmp-y/');
    try {
      replica.failWith(failing.path, 500, 1_000);
      expect(JSON.parse((await runCli(['run', ...common, '--quarantine', '--json'])).stdout)).toMatchObject({
        quarantined: 1,
      });
      const listed = await runCli(['quarantine', ...common, '--json']);
      expect(
        listed.stdout
          .trim()
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line).key),
      ).toEqual([recordKey]);

      replica.clearFaults();
      const retried = await runCli(['retry-quarantine', ...common]);
      expect(retried.stdout).toBe(`stored: ${recordKey}\n1 stored, 0 still failing\n`);
      expect(await readFile(join(dir, leafKey('', LOWER, failing.id, failing.version)), 'utf8')).toBe(
        leafBody(catalog, failing, replica.origin),
      );
    } finally {
      replica.clearFaults();
    }
  });
});
