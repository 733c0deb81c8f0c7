/**
 * Reproductions of the local lock's two problems, kept as checks (exit 0 now, 1 if either comes back):
 *
 * 1. Liveness (the `kill` kind, fixed in f0c2b8c): a run SIGKILLed while it held `.catalog-sync/state.lock` left
 *    the lock behind, and every run in the next 30 s failed with "still locked", because the lock was broken only
 *    once 30 s old. A child process takes the lock as LocalStore does (a record with its token, host and pid,
 *    linked into place) and is SIGKILLed; a cursor write must then succeed at once.
 * 2. Safety (issue 10, item 2): run A holds the lock and has read the state (cursor 2019); the lock ages past
 *    30 s; run B breaks it and writes 2022; A then wrote its stale copy, 2020: the cursor went backward and B's
 *    acknowledged write was lost. Replayed step by step with a clock moved by hand (no 30 s wait): once with A
 *    heartbeating (B must wait, never break it), once with A paused and silent (B breaks it; A's write must fail
 *    and write nothing). Either way the cursor must end at the newest acknowledged write.
 *
 *   npx tsx chaos/repro-stale-lock.ts
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseTimestamp, type Ticks } from '../lambda/contract/index.js';
import { LocalStore, STATE_DIR, type LockEvent, type CompareAndSetResult } from '../lambda/stores/index.js';

const Y2019 = parseTimestamp('2019-01-01T00:00:00.0000000Z');
const Y2020 = parseTimestamp('2020-01-01T00:00:00.0000000Z');
const Y2022 = parseTimestamp('2022-01-01T00:00:00.0000000Z');
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const folders: string[] = [];
const newFolder = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-lock-'));
  folders.push(dir);
  mkdirSync(join(dir, STATE_DIR, 'tmp'), { recursive: true });
  return dir;
};

async function deadHolder(): Promise<boolean> {
  const dir = newFolder();
  const lock = join(dir, STATE_DIR, 'state.lock');
  const aside = join(dir, STATE_DIR, 'tmp', 'lock-child');
  const take = `const fs=require('fs'),os=require('os');const t=Date.now();fs.writeFileSync(${JSON.stringify(aside)},JSON.stringify({token:'child',host:os.hostname(),pid:process.pid,createdAt:t,heartbeatAt:t}));fs.linkSync(${JSON.stringify(aside)},${JSON.stringify(lock)});fs.rmSync(${JSON.stringify(aside)});setInterval(()=>{},1000)`;
  const holder = spawn(process.execPath, ['-e', take]);
  while (!existsSync(lock)) await delay(10);
  holder.kill('SIGKILL');
  await new Promise((resolve) => holder.once('exit', resolve));
  say(`1. lock left by pid ${holder.pid}, which is dead (SIGKILL)`);
  const started = Date.now();
  try {
    await new LocalStore(dir).compareAndSet('c', undefined, { value: Y2019, commitId: 'c', runId: 'r' });
    say(`   a cursor write right after the kill: written after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return true;
  } catch (error) {
    say(`   a cursor write right after the kill: FAILED: ${(error as Error).message}`);
    return false;
  }
}

/** A holds and has read; the lock ages 40 s (A heartbeating or not); B tries; A goes on. */
async function staleCopy(aHeartbeats: boolean): Promise<boolean> {
  const dir = newFolder();
  await new LocalStore(dir).compareAndSet('c', undefined, { value: Y2019, commitId: '2019', runId: 'r0' });
  const expected = await new LocalStore(dir).read('c');
  let now = Date.now();
  const clock = (): number => now;
  let beatA: (() => Promise<void>) | undefined;
  let aRead!: () => void;
  let goA!: () => void;
  const aHasRead = new Promise<void>((resolve) => (aRead = resolve));
  const aMayGo = new Promise<void>((resolve) => (goA = resolve));
  const storeA = new LocalStore(dir, {
    lock: { now: clock, scheduleHeartbeat: (beat) => ((beatA = beat), () => (beatA = undefined)) },
    onLockEvent: async (event) => {
      if (event !== 'committing') return;
      aRead();
      await aMayGo;
    },
  });
  const eventsB: LockEvent[] = [];
  let bTried!: () => void;
  const bHasTried = new Promise<void>((resolve) => (bTried = resolve));
  const storeB = new LocalStore(dir, {
    lock: { now: clock, scheduleHeartbeat: () => () => undefined },
    onLockEvent: (event) => {
      eventsB.push(event);
      if (event === 'waiting' || event === 'acquired') bTried();
    },
  });

  const outcome = (promise: Promise<CompareAndSetResult>): Promise<CompareAndSetResult | Error> =>
    promise.catch((error: Error) => error);
  const a = outcome(storeA.compareAndSet('c', expected, { value: Y2020, commitId: '2020', runId: 'rA' }));
  await aHasRead;
  for (let i = 0; i < 4; i++) {
    now += 10_000;
    if (aHeartbeats) await beatA?.();
  }
  const b = outcome(storeB.compareAndSet('c', expected, { value: Y2022, commitId: '2022', runId: 'rB' }));
  await bHasTried;
  goA();
  const [resultA, resultB] = await Promise.all([a, b]);
  const stored = (await new LocalStore(dir).read('c'))?.value;
  const acknowledged: Ticks[] = [resultA, resultB].flatMap((result, i) =>
    !(result instanceof Error) && result.outcome === 'written' ? [i === 0 ? Y2020 : Y2022] : [],
  );
  const newest = acknowledged.reduce((max, value) => (value > max ? value : max), Y2019);
  const show = (result: CompareAndSetResult | Error): string =>
    result instanceof Error ? `error: ${result.message}` : result.outcome;
  say(
    `${aHeartbeats ? '2a' : '2b'}. A ${aHeartbeats ? 'heartbeating' : 'paused, silent'} for 40 s; B ${eventsB.includes('stale') ? 'broke the lock' : 'waited'}`,
  );
  say(`   A (2020): ${show(resultA)}`);
  say(`   B (2022): ${show(resultB)}`);
  const ok = stored === newest && (aHeartbeats ? !eventsB.includes('stale') : resultA instanceof Error);
  say(
    `   cursor now ${stored === Y2022 ? '2022' : stored === Y2020 ? '2020' : String(stored)}, newest acknowledged ${newest === Y2022 ? '2022' : '2020'}: ${ok ? 'ok' : 'REPRODUCED'}`,
  );
  return ok;
}

try {
  const results = [await deadHolder(), await staleCopy(true), await staleCopy(false)];
  const ok = results.every(Boolean);
  say(ok ? '\nno problem' : '\nREPRODUCED');
  process.exitCode = ok ? 0 : 1;
} finally {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
}
