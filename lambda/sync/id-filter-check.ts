import type { SyncSettings } from '../contract/index.js';
import type { CursorStore, SnapshotStore } from '../stores/types.js';
import { checkIdFilter } from './index.js';

/** How a Lambda's changed `INCLUDE_IDS`/`EXCLUDE_IDS` is accepted: the change is made once, from the CLI. */
const LAMBDA_REFILTER_HINT =
  'run `catalog-sync run --refilter` once with the new --include/--exclude against this table and bucket,';

/**
 * A Lambda face's check of `INCLUDE_IDS`/`EXCLUDE_IDS` against the mirror's `filter.json` (the follower's and the
 * backfill's functions): refuses another filter (`IdFilterChangedError`), records the filter of a mirror that has
 * none. Resolves true when checked, false when the store did not answer (said through `warn`): the caller checks
 * again next invocation, and its work meets that failure itself.
 */
export async function checkLambdaIdFilter(
  snapshots: SnapshotStore,
  cursors: Pick<CursorStore, 'read'>,
  settings: Pick<SyncSettings, 'prefix' | 'idFilter' | 'cursorName'>,
  warn: (message: string, error: Error) => void,
): Promise<boolean> {
  let checked = true;
  await checkIdFilter(snapshots, settings.prefix, settings.idFilter, {
    cursor: async () => (await cursors.read(settings.cursorName))?.value,
    refilter: false,
    setting: 'INCLUDE_IDS/EXCLUDE_IDS',
    howToChange: LAMBDA_REFILTER_HINT,
    onUnchecked: (error) => {
      checked = false;
      warn('id filter not checked', error as Error);
    },
  });
  return checked;
}
