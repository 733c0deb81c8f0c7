/**
 * Reproduction of the liveness problem the `kill` kind met on the local folder (fixed in f0c2b8c: a lock whose
 * process is gone is broken at once): a run SIGKILLed while it held `.catalog-sync/state.lock` left the lock
 * behind, and every run in the next 30 s failed with "state.lock: still locked after 2001 attempts", because the
 * lock was broken only once 30 s old (STALE_LOCK_MS) while a waiter gave up after 2,000 attempts of 2-10 ms
 * (about 12 s). Kept as a check: exit 0 now, 1 before the fix.
 *
 *   npx tsx chaos/repro-stale-lock.ts
 *
 * A child process takes the lock exactly as LocalStore does (open 'wx', write its pid) and is SIGKILLed; then a
 * cursor write is attempted at once, and again after the lock has turned 30 s old. Exits 1 when the first write
 * fails although the holder is dead.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { LocalStore, STATE_DIR } from '../lambda/stores/local-store.js';

const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-lock-'));
const lock = join(dir, STATE_DIR, 'state.lock');
mkdirSync(join(dir, STATE_DIR), { recursive: true });
try {
  // The holder: takes the lock like LocalStore.withLock, then is killed before it can remove it.
  const holder = spawn(process.execPath, ['-e', `const fs=require('fs');const h=fs.openSync(${JSON.stringify(lock)},'wx');fs.writeSync(h,String(process.pid));fs.closeSync(h);setInterval(()=>{},1000)`]);
  while (!existsSync(lock)) await delay(10);
  await delay(50);
  holder.kill('SIGKILL');
  await new Promise((resolve) => holder.once('exit', resolve));
  process.stdout.write(`lock left by pid ${holder.pid}, which is dead (SIGKILL)\n`);

  const store = new LocalStore(dir);
  const attempt = async (label: string): Promise<boolean> => {
    const started = Date.now();
    try {
      await store.compareAndSet('catalog-to-s3', undefined, { value: 1n, commitId: 'c', runId: 'r' });
      process.stdout.write(`${label}: written after ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      return true;
    } catch (error) {
      process.stdout.write(`${label}: FAILED after ${((Date.now() - started) / 1000).toFixed(1)} s: ${(error as Error).message}\n`);
      return false;
    }
  };
  const first = await attempt('a cursor write right after the kill');
  if (!first) {
    await delay(Math.max(0, 31_000 - 12_000));
    await attempt('the same write once the lock is 30 s old');
  }
  process.stdout.write(first ? '\nno problem\n' : '\nREPRODUCED: a dead holder\'s lock fails every run for 30 s\n');
  process.exitCode = first ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
