/** The view's stores as the `view` and `latest` commands (and the rebuild's worker processes) open them. */
import { resolve } from 'node:path';
import { SettingsError } from '../../contract/index.js';
import { checkDataDir, type DataDirAccess } from '../../runtime/cli/open-stores.js';
import type { StoreOptions } from '../../runtime/cli/options.js';
import { folderViewStores, type ViewStores } from '../open-folder.js';

/** Where a rebuild's records go when not in the mirror's own place (`--temp-dir`). */
export interface RecordsPlace {
  readonly recordsDir?: string;
}

/**
 * The view's stores as `run` opens its stores: DynamoDB and S3 with both flags, the folder otherwise; a rebuild's
 * records in the bucket (or the folder's state folder), or in `recordsDir`.
 */
export async function openViewStores(options: StoreOptions & RecordsPlace, access: DataDirAccess): Promise<ViewStores> {
  const { cursorTable, bucket } = options;
  if ((cursorTable === undefined) !== (bucket === undefined)) {
    throw new SettingsError(
      cursorTable === undefined ? '--cursor-table' : '--bucket',
      `is required together with ${cursorTable === undefined ? '--bucket' : '--cursor-table'}`,
    );
  }
  const recordsDir = options.recordsDir === undefined ? {} : { recordsDir: options.recordsDir };
  if (bucket !== undefined && cursorTable !== undefined) {
    const { awsViewStores } = await import('../open.js');
    return awsViewStores({ bucket, cursorTable, prefix: options.prefix ?? '', ...recordsDir });
  }
  if (options.dataDir.trim() === '') throw new SettingsError('--data-dir', 'must not be empty');
  await checkDataDir(resolve(options.dataDir), access);
  return folderViewStores(options.dataDir, { prefix: options.prefix ?? '', ...recordsDir });
}
