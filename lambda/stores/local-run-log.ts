import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunSummary } from '../contract/run-summary.js';
import { isPlainObject, type LocalFolder, readTextIfExists } from './local-folder.js';
import { LocalStateError } from './local-state-error.js';
import { compareRunsNewestFirst } from './run-order.js';
import type { RunLogStore, RunQuery } from './types.js';

/** The run log of each cursor: one JSON line per run, appended, so a checkpoint never rewrites it. */
const RUNS_DIR = 'runs';
/** Runs kept in a local log at most, newest first, besides the TTL. */
const MAX_LOCAL_RUNS = 5_000;
/** A log past this size is compacted to the newest {@link MAX_LOCAL_RUNS} live runs. */
const COMPACT_RUN_LOG_BYTES = 4 * 1024 * 1024;

type StoredRun = RunSummary & { sk: string; expiresAt: number };

/** Run-log compaction, for tests: past `compactRunLogBytes`, keep the newest `maxRuns` live runs. */
export interface LocalRunLogOptions {
  readonly compactRunLogBytes?: number;
  readonly maxRuns?: number;
}

/**
 * The run log of a local folder: each cursor's runs in a JSON-lines file of its state folder, appended under
 * the folder's lock (a checkpoint never rewrites the log) and fsynced before the append resolves. A log past
 * its size limit is compacted, atomically and under the lock, to its newest live runs. Records carry the
 * DynamoDB sort key (`run#<id>`) and TTL (`expiresAt`), so queries read as they do on the table.
 */
export class LocalRunLog implements RunLogStore {
  private readonly compactRunLogBytes: number;
  private readonly maxRuns: number;

  constructor(
    private readonly folder: LocalFolder,
    options: LocalRunLogOptions = {},
  ) {
    this.compactRunLogBytes = options.compactRunLogBytes ?? COMPACT_RUN_LOG_BYTES;
    this.maxRuns = options.maxRuns ?? MAX_LOCAL_RUNS;
  }

  async appendRun(summary: RunSummary, expiresAt: number): Promise<void> {
    const path = this.runLogPath(summary.cursorName);
    const line = `${JSON.stringify({ ...summary, sk: `run#${summary.runId}`, expiresAt })}\n`;
    await this.folder.lock.hold(async (held) => {
      await held.whileHeld(() => this.folder.writer.append(path, line));
      if ((await stat(path)).size > this.compactRunLogBytes) {
        const now = Math.floor(Date.now() / 1000);
        const kept = (await this.readRuns(path))
          .filter((run) => run.expiresAt > now)
          .sort(compareRunsNewestFirst)
          .slice(0, this.maxRuns);
        await this.folder.writer.write(
          path,
          Buffer.from(
            kept
              .reverse()
              .map((run) => `${JSON.stringify(run)}\n`)
              .join(''),
          ),
          held.whileHeld,
        );
      }
    });
  }

  async listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]> {
    const now = Math.floor(Date.now() / 1000);
    const from = `run#${query.fromId ?? ''}`;
    const to = `run#${query.toId === undefined ? '~' : `${query.toId}~`}`;
    const runs = (await this.readRuns(this.runLogPath(cursorName))).filter(
      (run) => run.expiresAt > now && run.sk >= from && run.sk <= to,
    );
    return runs
      .sort(compareRunsNewestFirst)
      .slice(0, query.limit)
      .map(({ sk: _sk, expiresAt: _expiresAt, ...summary }) => summary as RunSummary);
  }

  private runLogPath(cursorName: string): string {
    // Cursor names are plain (A-Z a-z 0-9 . _ -, no leading dot): safe as file names.
    return join(this.folder.stateDir, RUNS_DIR, `${cursorName}.jsonl`);
  }

  /** The runs of one log. A last line cut short by a crash mid-append is skipped; any other bad line is an error. */
  private async readRuns(path: string): Promise<StoredRun[]> {
    const text = await readTextIfExists(path);
    if (text === undefined) return [];
    const lines = text.split('\n');
    const runs: StoredRun[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === '') continue;
      let run: StoredRun;
      try {
        run = JSON.parse(line) as StoredRun;
        if (!isPlainObject(run) || typeof run.sk !== 'string' || typeof run.expiresAt !== 'number')
          throw new Error('not a run record');
      } catch (cause) {
        if (i === lines.length - 1) continue;
        throw new LocalStateError(`${path}: line ${i + 1} is not a run record: ${(cause as Error).message}`, { cause });
      }
      runs.push(run);
    }
    return runs;
  }
}
