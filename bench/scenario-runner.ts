/**
 * The bench's scenario runner (run.ts orchestrates): the environment every child gets, the wait for an idle machine,
 * and one scenario run in a child of its own, its row completed with the servers' CPU, requests and PUTs.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLoad, runChild, type Servers } from './children.js';
import type { S3Shape } from './nuget-rows.js';
import type { Options } from './options.js';
import { summarizeProfile } from './profile-summary.js';
import type { Row } from './report.js';
import type { ScenarioConfig, ScenarioResult } from './scenario-types.js';
import { round } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The scenarios' environment: fake credentials, no AWS config file, the emulators' endpoints. */
export function benchEnv(s3Endpoint: string, dynamoEndpoint: string | undefined): NodeJS.ProcessEnv {
  const noFile = join(here, 'no-such-aws-file');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_CONFIG_FILE: noFile,
    AWS_SHARED_CREDENTIALS_FILE: noFile,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_ENDPOINT_URL_S3: s3Endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    ...(dynamoEndpoint ? { AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint } : {}),
  };
  delete env.AWS_SESSION_TOKEN;
  delete env.AWS_PROFILE;
  return env;
}

/** What the scenarios of a bench run share: its options, the servers' child, the environment and the log. */
export interface RunnerContext {
  readonly opts: Options;
  readonly servers: Servers;
  readonly env: NodeJS.ProcessEnv;
  readonly log: (text: string) => void;
}

/**
 * How each scenario is run: after the machine is idle (`--wait-idle`), with the servers' S3 shape set and their logs
 * and counters cleared, in a child of its own (scenario.ts), its row completed with what the servers saw; a profiled
 * one writes its CPU profile under `profileDir`.
 */
export function scenarioRunner({ opts, servers, env, log }: RunnerContext): {
  waitIdle: () => Promise<void>;
  profileDir: string;
  profilePath: (label: string) => string;
  scenario: (
    config: Omit<ScenarioConfig, 's3Endpoint' | 'bucket' | 'cursorLatencyMs'>,
    profile?: boolean,
    s3Shape?: S3Shape,
  ) => Promise<Row>;
} {
  const waitIdle = async (): Promise<void> => {
    if (opts.waitIdle <= 0) return;
    const until = performance.now() + opts.waitIdle * 1000;
    for (;;) {
      const busy = await machineLoad(1_000);
      if (busy < 0.3 || performance.now() >= until) {
        if (busy >= 0.3)
          log(`  still ${busy.toFixed(2)} cores busy with other processes after ${opts.waitIdle} s: going on`);
        return;
      }
    }
  };

  const profileDir = join(opts.out, 'profiles');
  const profilePath = (label: string): string => {
    mkdirSync(profileDir, { recursive: true });
    return join(profileDir, `${label.replace(/[^A-Za-z0-9._]+/g, '-').replace(/^-+|-+$/g, '')}.cpuprofile`);
  };
  const scenario = async (
    config: Omit<ScenarioConfig, 's3Endpoint' | 'bucket' | 'cursorLatencyMs'>,
    profile = false,
    s3Shape?: S3Shape,
  ): Promise<Row> => {
    await waitIdle();
    log(`${config.label}: ${config.leaves} leaves, concurrency ${config.concurrency}`);
    const replicaName = servers.ready.replicas.find((r) => r.serviceIndexUrl === config.source)!.name;
    const shape = s3Shape ?? { latencyMs: opts.s3Latency };
    await servers.admin(
      `/s3-latency?ms=${shape.latencyMs}${shape.tail ? `&slowEvery=${shape.tail.every}&slowMs=${shape.tail.ms}` : ''}`,
    );
    await servers.admin(`/log?replica=${replicaName}&clear=1`);
    await servers.admin('/s3?reset=1');
    const cpu0 = await servers.admin<{ userUs: number; systemUs: number }>('/cpu');
    const profileFile = profile ? profilePath(config.label) : undefined;
    const result = await runChild<ScenarioResult>(
      'scenario.js',
      {
        ...config,
        s3Endpoint: servers.ready.s3Endpoint,
        bucket: 'catalog-sync-bench',
        cursorLatencyMs: opts.cursorLatency,
        ...(profileFile ? { profileFile } : {}),
      } satisfies ScenarioConfig,
      env,
    );
    const cpu1 = await servers.admin<{ userUs: number; systemUs: number }>('/cpu');
    const serverLog = await servers.admin<{ leaves: number; pageRequests: number }>(
      `/log?replica=${replicaName}&clear=1`,
    );
    const s3 = await servers.admin<{ puts: number; slowPuts: number }>('/s3?reset=1');
    await servers.admin(`/s3-latency?ms=${opts.s3Latency}`);
    const serverCpuMs = (cpu1.userUs + cpu1.systemUs - cpu0.userUs - cpu0.systemUs) / 1000;
    const row: Row = {
      ...result,
      serverCpuMs: round(serverCpuMs, 1),
      serverCpuShare: round(serverCpuMs / result.wallMs, 2),
      othersCpuShare: round(Math.max(0, result.machineCpuMs - result.cpuMs - serverCpuMs) / result.wallMs, 2),
      leafRequests: serverLog.leaves,
      pageRequests: serverLog.pageRequests,
      s3Puts: s3.puts,
      slowPuts: s3.slowPuts,
      ...(profileFile ? { profile: summarizeProfile(profileFile) } : {}),
    };
    log(
      `  ${row.leavesPerSec} leaves/s, p50 ${row.perLeafMs.p50} ms, p99 ${row.perLeafMs.p99} ms, ${row.cpuPerLeafMs} ms CPU/leaf, ` +
        `ELU ${row.eventLoopUtilization}, RSS ${row.maxRssMB} MB; servers ${Math.round(row.serverCpuShare * 100)}%, others ${Math.round(row.othersCpuShare * 100)}% of a core`,
    );
    return row;
  };
  return { waitIdle, profileDir, profilePath, scenario };
}
