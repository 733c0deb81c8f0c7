import { join } from 'node:path';
import { isPlainObject, type LocalFolder, readTextIfExists } from './local-folder.js';
import { LocalStateError } from './local-state-error.js';
import type { LeaseRecord } from './types.js';

/** The named consumers' leases, in the state folder; its own lock, so a lease beat never waits for a cursor write. */
const LEASES_FILE = 'leases.json';
const LEASES_LOCK = 'leases.lock';

interface LeasesFile {
  leases: Record<string, { holder: string; until: number; updatedAt?: string }>;
}

/**
 * The leases of a folder's named consumers (`.catalog-sync/leases.json`, keyed like their cursors), each set only by
 * a compare-and-set on the lease seen, read, compared and written under the file's lock: processes on one host, or
 * on hosts sharing the folder, take a consumer's lease as safely as on DynamoDB.
 */
export class LocalLeases {
  private readonly path: string;

  constructor(private readonly folder: LocalFolder) {
    this.path = join(folder.stateDir, LEASES_FILE);
  }

  async read(key: string): Promise<LeaseRecord | undefined> {
    return leaseOf((await this.readFile()).leases[key]);
  }

  async all(): Promise<Map<string, LeaseRecord>> {
    const { leases } = await this.readFile();
    return new Map(Object.entries(leases).map(([key, lease]) => [key, leaseOf(lease)!]));
  }

  async swap(key: string, expected: LeaseRecord | undefined, next: LeaseRecord): Promise<boolean> {
    return this.folder.namedLock(LEASES_LOCK).hold(async (held) => {
      const file = await this.readFile();
      const current = leaseOf(file.leases[key]);
      const matches =
        expected === undefined
          ? current === undefined
          : current?.holder === expected.holder && current.until === expected.until;
      if (!matches) return false;
      file.leases[key] = { holder: next.holder, until: next.until, updatedAt: new Date().toISOString() };
      await this.folder.writer.write(this.path, Buffer.from(JSON.stringify(file, null, 1)), held.whileHeld);
      return true;
    });
  }

  private async readFile(): Promise<LeasesFile> {
    const text = await readTextIfExists(this.path);
    if (text === undefined) return { leases: {} };
    try {
      const parsed = JSON.parse(text) as Partial<LeasesFile>;
      if (!isPlainObject(parsed) || !isPlainObject(parsed.leases)) throw new Error('"leases" is not a JSON object');
      for (const [key, lease] of Object.entries(parsed.leases)) {
        if (!isPlainObject(lease) || typeof lease.holder !== 'string' || typeof lease.until !== 'number')
          throw new Error(`lease ${JSON.stringify(key)} has no "holder" string or "until" number`);
      }
      return parsed as LeasesFile;
    } catch (cause) {
      throw new LocalStateError(`${this.path}: not a valid leases file: ${(cause as Error).message}`, { cause });
    }
  }
}

function leaseOf(lease: LeasesFile['leases'][string] | undefined): LeaseRecord | undefined {
  return lease === undefined ? undefined : { holder: lease.holder, until: lease.until };
}
