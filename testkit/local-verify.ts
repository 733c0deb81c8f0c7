/**
 * Checks a `--data-dir` folder of the embedded default against a generated catalog, as {@link SyncHarness.verify}
 * checks a bucket: every commit up to a cursor stored whole and exactly (its manifest, and each leaf's bytes as
 * served), under exactly the S3 key layout, with no file the catalog does not explain and no temporary file
 * left behind. Also reads the state file directly, as a user (or a test between runs) would.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { leafKey, manifestKey } from '../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp, type Ticks } from '../lambda/contract/time.js';
import { commitKey } from '../lambda/contract/keys.js';
import { STATE_DIR } from '../lambda/stores/index.js';
import { leafBody, type GeneratedCatalog, type GeneratedCommit } from './catalog-generator.js';

/** The state file of the embedded default, relative to the data folder. */
export const STATE_FILE = `${STATE_DIR}/state.json`;
/** The run log of the default cursor, relative to the data folder. */
export const RUN_LOG_FILE = `${STATE_DIR}/runs/catalog-to-s3.jsonl`;

/** The state file as stored. */
export interface LocalState {
  cursors: Record<string, { cursor: string; commitId?: string; runId?: string; updatedAt?: string }>;
}

/** The parsed state file, or `undefined` when there is none yet. */
export async function readLocalState(dataDir: string): Promise<LocalState | undefined> {
  let text: string;
  try {
    text = await readFile(join(dataDir, STATE_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text) as LocalState;
}

/** The stored cursor of `name` exactly as stored, or `undefined`. */
export async function readLocalCursor(dataDir: string, name = 'catalog-to-s3'): Promise<string | undefined> {
  return (await readLocalState(dataDir))?.cursors[name]?.cursor;
}

/** Every file under `dataDir` as a `/`-separated relative path, in byte order (the state folder included). */
export async function listFiles(dataDir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string, relative: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) await walk(join(dir, entry.name), path);
      else files.push(path);
    }
  };
  await walk(dataDir, '');
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Snapshot keys stored under `dataDir` (files outside the state folder), in byte order. */
export async function localKeys(dataDir: string, prefix = ''): Promise<string[]> {
  return (await listFiles(dataDir)).filter((key) => !key.startsWith(`${STATE_DIR}/`) && key.startsWith(prefix));
}

/**
 * Manifests of commits after `upTo` that are not of a whole commit. A run writes each manifest as its commit
 * completes, in any order, so a run that stopped may leave manifests past its cursor: each must be whole.
 */
export async function strayLocalManifests(
  dataDir: string,
  catalog: GeneratedCatalog,
  origin: string,
  upTo: Ticks,
  prefix = '',
): Promise<string[]> {
  const stray = new Set(await localManifestsAfter(dataDir, catalog, upTo, prefix));
  const problems: string[] = [];
  for (const commit of catalog.commits) {
    if (stray.has(manifestKey(prefix, commitKey(parseTimestamp(commit.timestamp)))))
      problems.push(...(await verifyCommit(dataDir, catalog, commit, origin, prefix)));
  }
  return problems;
}

/** Manifest keys of commits after `upTo` that are stored. */
export async function localManifestsAfter(
  dataDir: string,
  catalog: GeneratedCatalog,
  upTo: Ticks,
  prefix = '',
): Promise<string[]> {
  const stored = new Set(await localKeys(dataDir, `${prefix}commits/`));
  return catalog.commits
    .filter((commit) => parseTimestamp(commit.timestamp) > upTo)
    .map((commit) => manifestKey(prefix, commitKey(parseTimestamp(commit.timestamp))))
    .filter((key) => stored.has(key));
}

/**
 * Checks that every commit of `catalog` at or before `upTo` is stored whole and exactly under `dataDir`: its
 * manifest at `{prefix}commits/{commitKey}.json` and each leaf at `{prefix}leaves/{commitKey}/{id}/{version}.json`,
 * byte for byte as served from `origin`; that every snapshot file is a key of some commit of the catalog (later
 * commits may be partly stored); and that no temporary file is left (in `.catalog-sync/tmp/`, or beside a key). Returns the problems.
 */
export async function verifyLocal(
  dataDir: string,
  catalog: GeneratedCatalog,
  origin: string,
  upTo: Ticks,
  prefix = '',
): Promise<string[]> {
  const problems: string[] = [];
  const files = await listFiles(dataDir);
  for (const file of files)
    if (file.includes('.tmp-') || file.startsWith(`${STATE_DIR}/tmp/`)) problems.push(`temporary file left: ${file}`);

  const known = new Set<string>([`${prefix}watermark.json`]);
  for (const commit of catalog.commits) {
    const key = commitKey(parseTimestamp(commit.timestamp));
    known.add(manifestKey(prefix, key));
    for (const leaf of commit.leaves) known.add(leafKey(prefix, key, leaf.id, leaf.version));
  }
  const keys = new Set(files.filter((file) => !file.startsWith(`${STATE_DIR}/`) && !file.includes('.tmp-')));
  for (const key of keys) if (!known.has(key)) problems.push(`unexpected file ${key}`);

  for (const commit of catalog.commits) {
    const ticks = parseTimestamp(commit.timestamp);
    if (ticks > upTo) continue;
    const path = manifestKey(prefix, commitKey(ticks));
    if (!keys.has(path)) {
      problems.push(`missing manifest ${path} of commit ${commit.timestamp}`);
      continue;
    }
    problems.push(...(await verifyCommit(dataDir, catalog, commit, origin, prefix)));
  }
  return problems;
}

/** A commit's stored manifest, as the verifiers read it. */
export interface StoredManifest {
  commitId: string;
  commitTimeStamp: string;
  leaves: { key: string; id: string; version: string; type: string }[];
}

/**
 * What is wrong with a commit's manifest against the generated commit: its id, its exact timestamp, the leaf keys
 * it lists (sorted, every one and nothing else) and each entry's id and type. Shared by the folder and the S3 verifiers.
 */
export function manifestProblems(manifest: StoredManifest, commit: GeneratedCommit, prefix: string): string[] {
  const problems: string[] = [];
  const ticks = parseTimestamp(commit.timestamp);
  const key = commitKey(ticks);
  if (manifest.commitId !== commit.commitId)
    problems.push(`${key}: manifest commitId ${manifest.commitId} != ${commit.commitId}`);
  if (manifest.commitTimeStamp !== formatTimestamp(ticks))
    problems.push(`${key}: manifest commitTimeStamp ${manifest.commitTimeStamp}`);
  const expectedKeys = commit.leaves.map((leaf) => leafKey(prefix, key, leaf.id, leaf.version)).sort();
  const manifestKeys = manifest.leaves.map((leaf) => leaf.key);
  if (JSON.stringify(manifestKeys) !== JSON.stringify(expectedKeys)) {
    problems.push(`${key}: manifest lists ${JSON.stringify(manifestKeys)}, expected ${JSON.stringify(expectedKeys)}`);
  }
  for (const entry of manifest.leaves) {
    const leaf = commit.leaves.find((candidate) => leafKey(prefix, key, candidate.id, candidate.version) === entry.key);
    if (leaf && (entry.id !== leaf.id || entry.type !== leaf.type))
      problems.push(`${entry.key}: manifest entry ${JSON.stringify(entry)}`);
  }
  return problems;
}

async function verifyCommit(
  dataDir: string,
  catalog: GeneratedCatalog,
  commit: GeneratedCommit,
  origin: string,
  prefix: string,
): Promise<string[]> {
  const problems: string[] = [];
  const ticks = parseTimestamp(commit.timestamp);
  const key = commitKey(ticks);
  const path = manifestKey(prefix, key);
  let manifest: StoredManifest;
  try {
    manifest = JSON.parse(await readFile(join(dataDir, ...path.split('/')), 'utf8'));
  } catch (error) {
    return [`${path}: not readable JSON (${(error as Error).message})`];
  }
  problems.push(...manifestProblems(manifest, commit, prefix));
  for (const leaf of commit.leaves) {
    const objectKey = leafKey(prefix, key, leaf.id, leaf.version);
    let body: Buffer;
    try {
      body = await readFile(join(dataDir, ...objectKey.split('/')));
    } catch (error) {
      problems.push(`${objectKey}: missing (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      continue;
    }
    if (!body.equals(Buffer.from(leafBody(catalog, leaf, origin))))
      problems.push(`${objectKey}: body differs from the served bytes`);
  }
  return problems;
}
