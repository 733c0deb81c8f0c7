import { parseTimeInput, SettingsError, ticksFromEpochMs, type Ticks } from '../../contract/index.js';

/** How the CLI asks for a time, in every error about one. */
const TIME_FORMS = 'ISO 8601 in UTC, e.g. 2024-01-01T00:00:00Z, or a date alone, 2024-01-01, meaning midnight UTC';

/** A time flag (`--since`, `--until`): an ISO 8601 time or a date alone; a settings error naming the flag otherwise. */
export function parseTimeFlag(flag: string, value: string): Ticks {
  try {
    return parseTimeInput(value);
  } catch (error) {
    // A near miss (2017-13-01) gets the parser's reason too; a word (lastweek) only the forms a time takes.
    const reason = /^\d{4}-/.test(value) ? `: ${(error as Error).message}` : '';
    throw new SettingsError(flag, `${JSON.stringify(value)} is not a time (${TIME_FORMS})${reason}`, { cause: error });
  }
}

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/**
 * A positive length of time in seconds: `90` or `90s`, `10m`, `2h`, `1d` (with `allowZero`, also 0); a settings
 * error naming the flag otherwise.
 */
export function parseSecondsFlag(
  flag: string,
  value: string,
  { allowZero = false }: { allowZero?: boolean } = {},
): number {
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(value.trim());
  const seconds =
    match === null ? Number.NaN : Number(match[1]) * UNIT_SECONDS[(match[2] || 's') as keyof typeof UNIT_SECONDS];
  if (!Number.isFinite(seconds) || seconds < 0 || (seconds === 0 && !allowZero)) {
    throw new SettingsError(
      flag,
      `${JSON.stringify(value)} must be a ${allowZero ? '' : 'positive '}number of seconds, or one with a unit: 90s, 10m, 2h, 1d`,
    );
  }
  return seconds;
}

/** The newest commit time a run may take: `--until`, and `--delay` behind the clock; undefined when neither is given. */
export interface RunCeiling {
  /** The bound now (the delay moves with the clock). */
  at(nowMs?: number): Ticks | undefined;
  /** For messages: `--until 2024-01-01T00:00:00Z`, `--delay 10m`. */
  readonly describe: string;
  /** Only `--until`: a follower stops once it is reached instead of polling. */
  readonly fixed: boolean;
}

/** The ceiling of `run --until T --delay D`: the earlier of T and now - D. */
export function runCeiling(until: string | undefined, delay: string | undefined): RunCeiling | undefined {
  if (until === undefined && delay === undefined) return undefined;
  const untilTicks = until === undefined ? undefined : parseTimeFlag('--until', until);
  const delayMs = delay === undefined ? undefined : parseSecondsFlag('--delay', delay, { allowZero: true }) * 1000;
  return {
    at(nowMs = Date.now()): Ticks | undefined {
      const delayed = delayMs === undefined ? undefined : ticksFromEpochMs(nowMs - delayMs);
      if (untilTicks === undefined) return delayed;
      return delayed === undefined || untilTicks < delayed ? untilTicks : delayed;
    },
    describe: [until === undefined ? '' : `--until ${until}`, delay === undefined ? '' : `--delay ${delay}`]
      .filter(Boolean)
      .join(' '),
    fixed: delay === undefined,
  };
}
