/**
 * The four kinds of chaos, one iteration each, in the frame of iteration.ts. Every iteration has a fresh generated catalog (a few dozen
 * commits) on a fresh replica, a fresh target (table + bucket, or folder), a sampler reading the cursor all
 * along, full invariant checks whenever no run is in flight, and at the end clean runs that must bring the
 * cursor to the head of the catalog.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { appendCommits } from '../../testkit/index.js';
import { RandomFaults } from './random-faults.js';
import type { Restartable } from './servers.js';
import { bump, type KindStats } from './stats.js';
import { awsTarget, localTarget } from './targets.js';
import { cliRun, engineRun, frame, note, randomPrefix, useAws, type ChaosContext, type Runner } from './iteration.js';

/** chaosCatalog: re-exported for the soak and the README. */
export { chaosCatalog, type ChaosContext, type S3Mode } from './iteration.js';

export const KINDS = ['overlap', 'kill', 'faults', 'restart'] as const;
export type Kind = (typeof KINDS)[number];

export const ITERATIONS: Record<Kind, (ctx: ChaosContext, stats: KindStats, i: number) => Promise<void>> = {
  overlap: overlapIteration,
  kill: killIteration,
  faults: faultsIteration,
  restart: restartIteration,
};

/** 8 runs at once against one cursor, round after round, while the catalog grows. */
async function overlapIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng } = ctx;
  // 8 engines in this process on DynamoDB + S3 (8 Lambdas), or 8 CLI processes on one folder; alternately.
  const aws = useAws(ctx, i, true);
  const runner: Runner = aws ? 'engine' : 'cli';
  const prefix = randomPrefix(prng);
  await frame(
    ctx,
    stats,
    {
      label: `overlap #${i + 1}`,
      runner,
      commits: 24,
      latencyMs: prng.int(1, 4),
      target: () => (aws ? awsTarget(ctx.emulators, prefix) : localTarget(prefix)),
    },
    async ({ target, catalog, replica, checker }) => {
      let grown = 0;
      for (let round = 1; round <= 3; round++) {
        let growth: Promise<void> | undefined;
        if (grown < 3 && prng.chance(0.4)) {
          grown++;
          const count = prng.int(1, 4);
          const seed = prng.int(1, 1e9);
          growth = delay(prng.int(0, runner === 'cli' ? 800 : 300)).then(() => {
            appendCommits(catalog, count, seed);
            note(`catalog grew by ${count} commit(s) to ${catalog.commits.length}`);
          });
        }
        const runs = Array.from({ length: 8 }, async () => {
          const maxCommits = prng.int(2, 15);
          const concurrency = prng.pick([1, 2, 4, 8, 16]);
          if (runner === 'engine') await engineRun(stats, target, replica, { maxCommits, concurrency });
          else
            await cliRun(ctx, stats, target, replica, [
              '--max-commits',
              String(maxCommits),
              '--concurrency',
              String(concurrency),
            ]);
        });
        await Promise.all(runs);
        await growth;
        await checker.check(`after round ${round}`);
        if (checker.atHead && growth === undefined && round >= 2) break;
      }
    },
  );
}

/** CLI runs SIGKILLed at random moments, one or two at a time, on a folder or on DynamoDB + S3. */
async function killIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng } = ctx;
  const aws = useAws(ctx, i, false);
  const prefix = randomPrefix(prng);
  await frame(
    ctx,
    stats,
    {
      label: `kill #${i + 1}`,
      runner: 'cli',
      commits: 30,
      latencyMs: prng.int(4, 10),
      target: () => (aws ? awsTarget(ctx.emulators, prefix) : localTarget(prefix)),
    },
    async ({ target, replica, checker }) => {
      const episodes = prng.int(2, 3);
      for (let episode = 1; episode <= episodes; episode++) {
        const together = prng.chance(0.3) ? 2 : 1;
        const runs = Array.from({ length: together }, () => {
          const args = prng.chance(0.3)
            ? ['--follow', '--poll-interval', '0.2']
            : ['--max-commits', String(prng.int(5, 40))];
          args.push('--concurrency', String(prng.pick([1, 2, 4, 8])));
          // From spawn: so some land in start-up, most mid-run (the AWS SDK takes longer to load).
          return cliRun(ctx, stats, target, replica, args, prng.int(30, aws ? 3_000 : 2_000));
        });
        await Promise.all(runs);
        await checker.check(`after kill episode ${episode}`);
      }
    },
  );
}

/** 30% of catalog paths failing up to 3 times each (5xx, 429 + Retry-After, resets, truncated and stalled bodies). */
async function faultsIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng } = ctx;
  const aws = useAws(ctx, i, true);
  const prefix = randomPrefix(prng);
  let faults: RandomFaults | undefined;
  let retries = 0;
  try {
    await frame(
      ctx,
      stats,
      {
        label: `faults #${i + 1}`,
        runner: 'engine',
        commits: 24,
        latencyMs: prng.int(0, 2),
        target: () => (aws ? awsTarget(ctx.emulators, prefix) : localTarget(prefix)),
      },
      async ({ target, replica, checker }) => {
        faults = new RandomFaults(replica, { prng, rate: 0.3, maxPerPath: 3, retryAfterSeconds: 1 });
        for (let round = 1; round <= 10; round++) {
          // Two runs at once, so faults also land while another run holds the cursor.
          await Promise.all(
            Array.from({ length: 2 }, () =>
              engineRun(stats, target, replica, {
                maxCommits: prng.int(5, 30),
                concurrency: prng.pick([2, 4, 8]),
                onRetry: () => retries++,
              }),
            ),
          );
          await checker.check(`after round ${round}`);
          if (checker.atHead) break;
        }
      },
    );
  } finally {
    if (faults) for (const [kind, count] of Object.entries(faults.served)) bump(stats.faults, kind, count);
    stats.retries += retries;
  }
}

/** The S3 server and the DynamoDB server stopped and started again while runs go on. */
async function restartIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng, emulators } = ctx;
  // Even iterations: two engines in this process (Lambda-style clients); odd: the CLI as a child process.
  const runner: Runner = i % 2 === 0 ? 'engine' : 'cli';
  const prefix = randomPrefix(prng);
  await frame(
    ctx,
    stats,
    {
      label: `restart #${i + 1}`,
      runner,
      commits: 40,
      latencyMs: prng.int(15, 30),
      sampleEveryMs: 150,
      // A read cut by a server stopped on purpose is not a torn object.
      sampleObjects: false,
      target: () => awsTarget(emulators, prefix),
    },
    async ({ target, replica, checker }) => {
      let inFlight = 0;
      let disrupting = true;
      const keepRunning = async (): Promise<void> => {
        // Like a schedule: a run that fails is followed by another, until the servers are back.
        while (disrupting) {
          const concurrency = prng.pick([2, 4]);
          inFlight++;
          try {
            if (runner === 'engine') await engineRun(stats, target, replica, { maxCommits: 100_000, concurrency });
            else
              await cliRun(ctx, stats, target, replica, [
                '--max-commits',
                '100000',
                '--concurrency',
                String(concurrency),
              ]);
          } finally {
            inFlight--;
          }
          await delay(100);
        }
      };
      const bounce = async (
        server: Restartable,
        startAfterMs: number,
        downMs: number,
        count: () => void,
      ): Promise<void> => {
        await delay(startAfterMs);
        if (inFlight > 0) stats.stopsMidRun++;
        note(`${server.name} stopping (${inFlight} run(s) in flight)`);
        await server.stop(1_000);
        count();
        note(`${server.name} stopped; down for ${downMs} ms plus its start-up`);
        await delay(downMs);
        await server.start();
        note(`${server.name} answering again`);
      };
      const runners = Array.from({ length: runner === 'engine' ? 2 : 1 }, keepRunning);
      try {
        await Promise.all([
          bounce(
            emulators.s3,
            prng.int(50, runner === 'cli' ? 2_000 : 1_200),
            prng.int(100, 1_500),
            () => stats.s3Restarts++,
          ),
          // DynamoDB Local's own start-up (a JVM) is a downtime of seconds already.
          bounce(
            emulators.dynamo,
            prng.int(50, runner === 'cli' ? 2_000 : 1_200),
            prng.int(0, 300),
            () => stats.dynamoRestarts++,
          ),
        ]);
      } finally {
        disrupting = false;
        await Promise.all(runners);
      }
      await checker.check('after the restarts');
    },
  );
}
