/** The local state file could not be read, locked or written (the lock was lost to another process). */
export class LocalStateError extends Error {
  override readonly name = 'LocalStateError';
}
