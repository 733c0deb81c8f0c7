/**
 * The invariants, checked from the outside: what is stored (the raw cursor item, S3 listings and objects, or
 * the state file and files), compared with the generated catalog. Nothing here asks the engine what it did.
 *
 * 1. The stored cursor never moves backward: every observation (samples during the iteration, checks
 *    between runs) is at or after the highest one before. It is always the exact timestamp of a commit of
 *    the catalog, written with seven fractional digits, with that commit's id.
 * 2. Every commit at or before the cursor is stored whole: its manifest, and every leaf byte for byte.
 * 3. Manifests have no gaps: the manifests stored are exactly the catalog's commits up to the newest of
 *    them (a manifest after a missing one is a violation), so the newest manifest is a watermark; and
 *    every commit up to the newest manifest is checked byte for byte too, not only up to the cursor.
 *
 * Samples taken while runs go on also read back, byte for byte, the objects of the newest commits at or
 * before the cursor (`sampleObjects`). On a store that keeps S3's promises a torn read there is a violation.
 * On stock s3rver (`--s3 stock`) an object being overwritten right now can be read short or cut: such a read
 * is only a *suspect*, read again at the next check (no run in flight then); whole then, it is counted as a
 * *torn read* (the emulator's); still broken, it is *lost*, a violation.
 */
import { commitKey, leafKey, manifestKey, parseTimestamp } from '../../lambda/contract/index.js';
import { leafBody, type GeneratedCatalog, parseTicks } from '../../testkit/index.js';
import type { Target } from './targets.js';

/** Commits at or before the cursor whose objects a sample reads back: the ones overlapping runs may be rewriting. */
const SAMPLED_COMMITS = 8;

/** How the checker treats what it reads. */
export interface CheckerOptions {
  /**
   * The S3 server may serve a torn read of an object while it is being overwritten (stock s3rver): a torn
   * read in a sample, or a problem of a check that a second read does not confirm, is counted, not reported.
   */
  tornReadsTolerated?: boolean;
  /** Samples read the objects of the newest commits at or before the cursor (off while servers are stopped on purpose). */
  sampleObjects?: boolean;
}

/** The contract: a stored cursor has exactly seven fractional digits. */
const STORED_CURSOR = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$/;

export class InvariantChecker {
  readonly problems: string[] = [];
  /** Leaves compared byte for byte. */
  leavesChecked = 0;
  /** Full checks (cursor, manifests, bytes). */
  checks = 0;
  /** Cursor samples taken while runs were going on, and samples that failed (a server down). */
  samples = 0;
  sampleErrors = 0;
  /** Objects read back byte for byte by samples. */
  objectsSampled = 0;
  /** Sampled reads found torn and whole once no run was in flight (tolerated on stock s3rver only). */
  tornReads = 0;
  /** Objects found torn and still torn once no run was in flight: a violation, also in {@link problems}. */
  lost = 0;
  /** Torn reads of samples, to read again at the next check: key -> what the sample saw. */
  private readonly suspects = new Map<string, { fault: string; cursorIndex: number; expected?: Buffer }>();
  /** Catalog index of the highest cursor observed; -1 before any. */
  private highest = -1;
  private highestText: string | undefined;
  /** Commits up to this index were read byte for byte by an earlier check. */
  private verifiedUpTo = -1;
  private ticks: bigint[] = [];
  private keys: string[] = [];

  constructor(
    private readonly target: Target,
    private readonly catalog: GeneratedCatalog,
    private readonly origin: string,
    private readonly label: string,
    private readonly options: CheckerOptions = {},
  ) {}

  /** Index in the catalog of the highest cursor observed; -1 when none was seen. */
  get cursorIndex(): number {
    return this.highest;
  }

  /** True when the highest cursor observed is the catalog's newest commit. */
  get atHead(): boolean {
    return this.highest === this.catalog.commits.length - 1;
  }

  private problem(where: string, text: string): void {
    this.problems.push(`${this.label} ${where}: ${text}`);
  }

  /** Commit times (independent parser) and manifest keys of the catalog, recomputed when it grew. */
  private refresh(): void {
    if (this.ticks.length === this.catalog.commits.length) return;
    this.ticks = this.catalog.commits.map((commit) => parseTicks(commit.timestamp));
    this.keys = this.catalog.commits.map((commit) =>
      manifestKey(this.target.prefix, commitKey(parseTimestamp(commit.timestamp))),
    );
  }

  /** Reads the cursor and checks invariant 1; returns the catalog index of the cursor (-1: none stored). */
  private async observeCursor(where: string): Promise<number> {
    this.refresh();
    const stored = await this.target.readCursor();
    if (!stored) {
      if (this.highest >= 0) this.problem(where, `the cursor disappeared (it was ${this.highestText})`);
      return -1;
    }
    if (!STORED_CURSOR.test(stored.cursor))
      this.problem(where, `cursor ${JSON.stringify(stored.cursor)} is not written with exactly 7 fractional digits`);
    let index = -1;
    try {
      const ticks = parseTicks(stored.cursor);
      index = this.ticks.indexOf(ticks);
    } catch {
      // reported below
    }
    if (index < 0) {
      this.problem(where, `cursor ${stored.cursor} is not the timestamp of any commit of the catalog`);
      return this.highest;
    }
    const commit = this.catalog.commits[index]!;
    if (stored.commitId !== undefined && stored.commitId !== commit.commitId) {
      this.problem(
        where,
        `cursor ${stored.cursor} carries commitId ${stored.commitId}, the catalog's is ${commit.commitId}`,
      );
    }
    if (index < this.highest) {
      this.problem(
        where,
        `the cursor moved BACKWARD: ${this.highestText} (commit #${this.highest}) -> ${stored.cursor} (commit #${index})`,
      );
    } else {
      this.highest = index;
      this.highestText = stored.cursor;
    }
    return index;
  }

  /**
   * A cheap check while runs are going on: the cursor (invariant 1), and every manifest at or before it
   * (a manifest is never removed, and the cursor moves only after it, so this holds at every instant).
   * Failures to read (a server stopped on purpose) are counted, not reported.
   */
  async sample(withManifests = true): Promise<void> {
    let index: number;
    let keys: string[];
    try {
      index = await this.observeCursor('sample');
      if (index < 0 || !withManifests) {
        this.samples++;
        return;
      }
      keys = await this.target.manifestKeys();
    } catch {
      this.sampleErrors++;
      return;
    }
    this.samples++;
    const stored = new Set(keys);
    const missing = this.keys.slice(0, index + 1).filter((key) => !stored.has(key));
    if (missing.length > 0)
      this.problem(
        'sample',
        `cursor at commit #${index} but ${missing.length} manifest(s) at or before it are missing: ${missing.slice(0, 3).join(', ')}`,
      );
    if (this.options.sampleObjects) await this.sampleObjects(index);
  }

  /** Reads back the manifest and every leaf of the newest commits at or before commit `index`. */
  private async sampleObjects(index: number): Promise<void> {
    const objects: { key: string; expected?: Buffer }[] = [];
    for (let i = index; i >= 0 && i > index - SAMPLED_COMMITS; i--) {
      const commit = this.catalog.commits[i]!;
      const key = commitKey(parseTimestamp(commit.timestamp));
      objects.push({ key: this.keys[i]! });
      for (const leaf of commit.leaves) {
        objects.push({
          key: leafKey(this.target.prefix, key, leaf.id, leaf.version),
          expected: Buffer.from(leafBody(this.catalog, leaf, this.origin)),
        });
      }
    }
    const faults = await Promise.all(
      objects.map(async (object) => ({ ...object, fault: await this.target.readObject(object.key, object.expected) })),
    );
    this.objectsSampled += objects.length;
    for (const { key, expected, fault } of faults) {
      if (!fault) continue;
      if (this.options.tornReadsTolerated) {
        if (!this.suspects.has(key))
          this.suspects.set(key, { fault, cursorIndex: index, ...(expected ? { expected } : {}) });
      } else {
        this.problem('sample', `cursor at commit #${index} but ${key} is not readable whole: ${fault}`);
      }
    }
  }

  /** Reads every suspect again, with no run in flight: whole, a torn read; still torn, lost. */
  private async settleSuspects(where: string): Promise<void> {
    for (const [key, suspect] of this.suspects) {
      const fault = await this.target.readObject(key, suspect.expected);
      if (fault) {
        this.lost++;
        this.problem(
          where,
          `LOST: ${key} (commit at or before the cursor #${suspect.cursorIndex}) read torn during the runs (${suspect.fault}) and still with no run in flight: ${fault}`,
        );
      } else {
        this.tornReads++;
      }
    }
    this.suspects.clear();
  }

  /**
   * The full check, when no run is in flight: invariants 1, 2 and 3, every leaf up to the newest manifest
   * compared byte for byte (on S3, only those after what an earlier check read, unless `full`: manifests
   * and leaves are never removed, and the last check of every iteration is `full`). Returns the catalog
   * index of the cursor.
   */
  async check(where: string, options: { full?: boolean } = {}): Promise<number> {
    this.checks++;
    await this.settleSuspects(where);
    const index = await this.observeCursor(where);
    const keys = await this.target.manifestKeys();
    const known = new Set(this.keys);
    for (const key of keys) if (!known.has(key)) this.problem(where, `manifest ${key} is not a commit of the catalog`);
    const stored = new Set(keys);
    let newest = -1;
    for (let i = 0; i < this.keys.length; i++) if (stored.has(this.keys[i]!)) newest = i;
    for (let i = 0; i < newest; i++) {
      if (!stored.has(this.keys[i]!))
        this.problem(where, `GAP: no manifest for commit #${i} (${this.keys[i]}) but commit #${newest}'s is stored`);
    }
    if (index > newest) this.problem(where, `cursor at commit #${index} but the newest manifest is commit #${newest}`);
    const upTo = Math.max(index, newest);
    if (upTo >= 0) {
      const from = options.full ? 0 : this.verifiedUpTo + 1;
      const through = parseTimestamp(this.catalog.commits[upTo]!.timestamp);
      let problems = await this.target.verify(this.catalog, this.origin, through, from);
      if (problems.length > 0 && this.options.tornReadsTolerated) {
        // Stock s3rver answers a PUT before its file is flushed: a read right after a run may be torn. Only
        // what a second read confirms is lost.
        const again = new Set(await this.target.verify(this.catalog, this.origin, through, from));
        this.tornReads += problems.filter((text) => !again.has(text)).length;
        problems = problems.filter((text) => again.has(text));
        // Objects still missing or not the served bytes (SyncHarness.verify's and verifyLocal's wording).
        this.lost += problems.filter((text) => /^missing|: missing|body differs/.test(text)).length;
      }
      for (const text of problems) this.problem(where, text);
      // verifyLocal always reads every commit up to upTo.
      for (let i = this.target.kind === 'local' ? 0 : from; i <= upTo; i++)
        this.leavesChecked += this.catalog.commits[i]!.leaves.length;
      this.verifiedUpTo = Math.max(this.verifiedUpTo, upTo);
    }
    return index;
  }
}

/** Samples the cursor every `everyMs` until stopped; lists the manifests at every `manifestsEvery`-th sample. */
export class Sampler {
  private stopped = false;
  private readonly loop: Promise<void>;
  constructor(checker: InvariantChecker, everyMs = 100, manifestsEvery = 4) {
    this.loop = (async () => {
      for (let n = 0; !this.stopped; n++) {
        await checker.sample(n % manifestsEvery === 0);
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}
