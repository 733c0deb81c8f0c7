/**
 * Start-up (issue 24, part 4): what a command costs before it does anything, and the Lambda's cold start.
 *
 * - CLI: CPU seconds (user + system, read by a preload at the child's exit) and wall time of
 *   `catalog-sync --version`, `status` and a no-op `run` (already caught up) on a local folder, each the median
 *   of `repeat` fresh processes, against a catalog replica in this process: with the code cache of
 *   bin/catalog-sync.js off (NODE_DISABLE_COMPILE_CACHE=1: a first command after an install or an upgrade) and
 *   warm (every command after). And `node -e 0`, Node's own start, the floor under every figure: on a loaded machine
 *   all of them rise together.
 * - Lambda (lambda-cold-start.ts): the handler bundled exactly as the construct bundles it (`nodeBundling` of
 *   infra/constructs/sync-function.ts, through the esbuild API): its size, then in a fresh process the time to
 *   load it and to answer a first invocation (a fresh cursor, 5 commits) against the replica, DynamoDB Local (or
 *   dynalite) and s3rver. The servers are warmed first, as AWS's are: a whole invocation in a process of its own,
 *   then, before each measured process, a read and a write on its new table and bucket (a new table or bucket
 *   answers its first requests slower on the local servers).
 *
 * Alone: `node dist/bench/start-up.js [--repeat N] [--only cli|lambda]`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CatalogReplica, generateCatalog } from '../testkit/index.js';
import { lambdaFigures, type LambdaFigures } from './lambda-cold-start.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'bin', 'catalog-sync.js');

/** CPU and wall seconds of one command: medians over the runs. */
export interface Figures {
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
}

/** One command's figures, with the code cache off (`cold`) and warm. */
export interface CommandFigures {
  readonly command: string;
  readonly cold: Figures;
  readonly warm: Figures;
  readonly runs: number;
}

export interface StartUpResult {
  /** `node -e 0`: Node's own start, under whatever load the machine had. */
  readonly node?: Figures;
  readonly cli: CommandFigures[];
  readonly lambda?: LambdaFigures;
  readonly targets: Array<{ readonly what: string; readonly met: boolean }>;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Runs `node <args>` under bash and reads the CPU the process used from bash's `times` (user + system of the
 * waited-for child, all its threads, to its very end). A preload reading `process.cpuUsage()` at the 'exit' event
 * missed what Node does after it: a V8 background thread still compiling undici's WebAssembly HTTP parser with
 * TurboFan, which the process waits for, was 0.06-0.09 CPU-s of a no-op `run` not counted before 2026-11-26.
 */
function measured(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ cpuSeconds: number; wallSeconds: number; code: number | null }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const script = '"$@" >/dev/null 2>&1; status=$?; times >&2; exit $status';
    const child = spawn('bash', ['-c', script, 'bash', process.execPath, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallSeconds = (performance.now() - started) / 1000;
      // `times`: the shell's own user and system time, then its children's ("0m0.123s 0m0.045s").
      const children = stderr.trim().split('\n').at(-1) ?? '';
      const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      if (seconds.length !== 2) return reject(new Error(`bash times: unexpected output ${JSON.stringify(stderr)}`));
      resolve({ cpuSeconds: seconds[0]! + seconds[1]!, wallSeconds, code });
    });
  });
}

async function figures(args: string[], repeat: number, env: NodeJS.ProcessEnv, what: string): Promise<Figures> {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const run = await measured(args, env);
    if (run.code !== 0) throw new Error(`${what}: exit ${run.code}`);
    cpu.push(run.cpuSeconds);
    wall.push(run.wallSeconds);
  }
  return { cpuSeconds: median(cpu), wallSeconds: median(wall) };
}

/** `command` with the code cache off and warm, the runs of each interleaved. `env` holds the bench's own TMPDIR. */
async function commandFigures(
  command: string,
  args: string[],
  repeat: number,
  env: NodeJS.ProcessEnv,
): Promise<CommandFigures> {
  const cold: Figures[] = [];
  const warm: Figures[] = [];
  for (let i = 0; i < repeat; i++) {
    cold.push(await figures([CLI, ...args], 1, { ...env, NODE_DISABLE_COMPILE_CACHE: '1' }, command));
    warm.push(await figures([CLI, ...args], 1, env, command));
  }
  const medianOf = (runs: Figures[]): Figures => ({
    cpuSeconds: median(runs.map((r) => r.cpuSeconds)),
    wallSeconds: median(runs.map((r) => r.wallSeconds)),
  });
  return { command, cold: medianOf(cold), warm: medianOf(warm), runs: repeat };
}

/** Which figures to measure: the CLI's commands, the Lambda's cold start, or both (the default). */
export interface StartUpParts {
  readonly cli?: boolean;
  readonly lambda?: boolean;
}

/** Every start-up figure; `repeat` fresh processes per CLI command and for the Lambda's cold start. */
export async function measureStartUp(
  repeat = 5,
  log: (line: string) => void = () => undefined,
  parts: StartUpParts = { cli: true, lambda: true },
): Promise<StartUpResult> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-startup-'));
  try {
    const measuredCli = parts.cli === false ? undefined : await cliFigures(dir, repeat, log);
    const cli = measuredCli?.commands ?? [];
    let lambda: LambdaFigures | undefined;
    if (parts.lambda !== false) {
      log('start-up: Lambda bundle and first invocation');
      lambda = await lambdaFigures(dir, repeat, log);
    }
    const noop = cli[2];
    const targets: Array<{ what: string; met: boolean }> = [];
    if (noop) {
      targets.push({
        what: `no-op local run < 0.15 CPU-s, code cache warm (${noop.warm.cpuSeconds.toFixed(3)})`,
        met: noop.warm.cpuSeconds < 0.15,
      });
      targets.push({
        what: `no-op local run < 0.15 CPU-s, code cache off (${noop.cold.cpuSeconds.toFixed(3)})`,
        met: noop.cold.cpuSeconds < 0.15,
      });
    }
    if (lambda) {
      targets.push({
        what: `handler bundle loaded + first invocation < 250 ms (${lambda.totalMs.toFixed(0)})`,
        met: lambda.totalMs < 250,
      });
      const deployed = lambda.withSourceMaps.totalMs;
      targets.push({
        what: `the same with the stack's --enable-source-maps (${deployed.toFixed(0)})`,
        met: deployed < 250,
      });
    }
    return { ...(measuredCli ? { node: measuredCli.node } : {}), cli, ...(lambda ? { lambda } : {}), targets };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function cliFigures(
  dir: string,
  repeat: number,
  log: (line: string) => void,
): Promise<{ node: Figures; commands: CommandFigures[] }> {
  const replica = await CatalogReplica.start({ catalog: generateCatalog({ commits: 50, seed: 24 }), pageSize: 20 });
  try {
    const folder = join(dir, 'mirror');
    const at = ['--source', replica.serviceIndexUrl, '--data-dir', folder];
    // The code cache of these runs in a temp folder of the bench's own.
    const temp = join(dir, 'tmp');
    mkdirSync(temp);
    const env = { ...process.env, TMPDIR: temp };
    // Caught up first: the measured `run` finds nothing to do. This run also writes the code cache.
    const first = await measured([CLI, 'run', ...at, '--no-progress'], env);
    if (first.code !== 0) throw new Error(`catch-up run: exit ${first.code}`);
    log('start-up: CLI commands');
    return {
      node: await figures(['-e', '0'], repeat, env, 'node -e 0'),
      commands: [
        await commandFigures('catalog-sync --version', ['--version'], repeat, env),
        await commandFigures('catalog-sync status (folder)', ['status', ...at], repeat, env),
        await commandFigures('catalog-sync run (folder, no-op)', ['run', ...at, '--no-progress'], repeat, env),
      ],
    };
  } finally {
    await replica.stop();
  }
}

/** The start-up table, for the report. */
export function startUpText(result: StartUpResult): string {
  const lines = [
    'Start-up (median of fresh processes; CPU = user + system; code cache of bin/catalog-sync.js off | warm)',
    '  command                              CPU s off   warm    wall s off   warm',
  ];
  const cell = (n: number, width: number): string => n.toFixed(3).padStart(width);
  if (result.node)
    lines.push(
      `  ${'node -e 0 (Node alone)'.padEnd(36)} ${cell(result.node.cpuSeconds, 9)} ${''.padStart(6)}  ${cell(result.node.wallSeconds, 10)}`,
    );
  for (const row of result.cli) {
    lines.push(
      `  ${row.command.padEnd(36)} ${cell(row.cold.cpuSeconds, 9)} ${cell(row.warm.cpuSeconds, 6)}  ${cell(row.cold.wallSeconds, 10)} ${cell(row.warm.wallSeconds, 6)}`,
    );
  }
  if (result.lambda) {
    const l = result.lambda;
    lines.push(
      `  Lambda handler bundle: ${(l.bundleBytes / 1024).toFixed(0)} KiB (ESM, minified, as the construct bundles it); ` +
        `load ${l.loadMs.toFixed(0)} ms + first invocation ${l.firstInvocationMs.toFixed(0)} ms = ${l.totalMs.toFixed(0)} ms, ${l.cpuMs.toFixed(0)} ms CPU in all ` +
        `(median of ${l.runs} cold processes, Node ${l.nodeVersion}, local servers warmed first); ` +
        `as deployed (NODE_OPTIONS=--enable-source-maps): load ${l.withSourceMaps.loadMs.toFixed(0)} ms + first invocation ${l.withSourceMaps.firstInvocationMs.toFixed(0)} ms = ${l.withSourceMaps.totalMs.toFixed(0)} ms`,
    );
  }
  // The machine's speed varies from one hour to the next (Node's own start has measured 0.072 to 0.12 CPU-s here):
  // what a command adds to Node's own start compares across runs better than its whole figure.
  const noop = result.cli[2];
  if (result.node && noop) {
    lines.push(
      `  no-op run above Node's own start: ${(noop.warm.cpuSeconds - result.node.cpuSeconds).toFixed(3)} CPU-s warm, ${(noop.cold.cpuSeconds - result.node.cpuSeconds).toFixed(3)} off`,
    );
  }
  for (const target of result.targets) lines.push(`  target ${target.met ? 'met' : 'NOT met'}: ${target.what}`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repeatAt = process.argv.indexOf('--repeat');
  const repeat = repeatAt > 0 ? Number(process.argv[repeatAt + 1]) : 5;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // --only cli | --only lambda: one half of the figures.
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
  const parts = only === undefined ? undefined : { cli: only === 'cli', lambda: only === 'lambda' };
  measureStartUp(repeat, (line) => process.stderr.write(`${line}\n`), parts).then(
    (result) => {
      process.stdout.write(`${startUpText(result)}\n${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
