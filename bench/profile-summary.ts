/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and sums self time by function and by package, so the
 * report can say where the time goes. Also a command: `node dist/bench/profile-summary.js FILE.cpuprofile`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface FrameTime {
  readonly frame: string;
  readonly selfMs: number;
  readonly share: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  /** Busy time: everything but `(idle)`. */
  readonly busyMs: number;
  readonly topFrames: FrameTime[];
  readonly byPackage: FrameTime[];
  readonly byCategory: FrameTime[];
}

/**
 * What a frame's time is spent on, in the benchmark's terms: the AWS SDK (S3 PutObject, DynamoDB), undici
 * (leaf GETs), zlib (decompression), JSON.parse + zod + lambda/catalog (validation), the engine itself, Node's
 * HTTP/net/streams (both clients' sockets), GC, module loading.
 */
export function categoryOf(functionName: string, url: string): string {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)' || functionName === '(root)') return 'V8 (program)';
  if (
    /\/node_modules\/@(smithy|aws-sdk|aws-crypto)\//.test(url) ||
    /\/node_modules\/(fast-xml-parser|strnum|tslib|bowser|uuid)\//.test(url)
  )
    return 'AWS SDK';
  if (url.includes('/node_modules/undici/')) return 'undici (catalog GETs)';
  if (url.includes('/node_modules/zod/') || url.includes('/dist/lambda/catalog/'))
    return 'validation (zod, lambda/catalog)';
  if (functionName === 'parse' && url === '') return 'validation (zod, lambda/catalog)';
  if (url.includes('/dist/lambda/')) return 'engine (lambda/sync, stores, ids)';
  if (url.includes('/dist/bench/')) return 'bench harness';
  if (url === 'node:zlib' || url.startsWith('node:internal/zlib')) return 'zlib (decompression)';
  if (
    url.startsWith('node:internal/modules') ||
    url.startsWith('node:internal/deps/cjs-module-lexer') ||
    functionName === 'wrapSafe' ||
    functionName === 'compileSourceTextModule'
  ) {
    return 'module loading';
  }
  if (url.startsWith('node:internal/crypto') || url === 'node:crypto') return 'AWS SDK';
  if (
    /^node:(_http|http|https|net|stream|events|buffer|timers|internal\/(streams|http|net|timers|stream_base|buffer|event_target|async_hooks|process\/task_queues|url|errors|util|validators|dns)|url)/.test(
      url,
    )
  ) {
    return 'Node http/net/streams/events';
  }
  if (url === '') return `native: ${functionName}`;
  return url.startsWith('node:') ? 'Node (other)' : 'other';
}

/** Where a script URL belongs: an npm package, Node's internals, or this project's code. */
export function packageOf(url: string): string {
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const project = /\/dist\/(lambda|bench|test)\/(.*)$/.exec(url);
  if (project) return `${project[1]}/${project[2]!.split('/').slice(0, -1).join('/') || '.'}`;
  return url;
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const project = /\/dist\/(.*)$/.exec(url);
  return project ? project[1]! : url;
}

/** Self time by function and by package, top `limit` of each. */
export function summarizeProfile(path: string, limit = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // A sample's time is the delta to the next sample.
  for (let i = 0; i < samples.length; i++) {
    const dt = deltas[i + 1] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const frames = new Map<string, number>();
  const packages = new Map<string, number>();
  const categories = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    totalUs += us;
    if (functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const name = functionName.startsWith('(')
      ? functionName
      : `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
    frames.set(name, (frames.get(name) ?? 0) + us);
    const pkg = functionName.startsWith('(') ? functionName : packageOf(url);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    const category = categoryOf(functionName, url);
    categories.set(category, (categories.get(category) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const top = (map: Map<string, number>): FrameTime[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([frame, us]) => ({
        frame,
        selfMs: Math.round(us / 100) / 10,
        share: busyUs > 0 ? Math.round((us / busyUs) * 1000) / 10 : 0,
      }));
  return {
    totalMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    topFrames: top(frames),
    byPackage: top(packages),
    byCategory: top(categories),
  };
}

/** The summary as text lines. */
export function formatProfile(summary: ProfileSummary, limit = Number.POSITIVE_INFINITY): string[] {
  const lines = [
    `busy ${summary.busyMs} ms of ${summary.totalMs} ms profiled (self time; share of busy time)`,
    'by category:',
  ];
  for (const f of summary.byCategory.slice(0, limit))
    lines.push(`  ${f.share.toFixed(1).padStart(5)}%  ${String(f.selfMs).padStart(8)} ms  ${f.frame}`);
  lines.push('top functions:');
  for (const f of summary.topFrames.slice(0, limit))
    lines.push(`  ${f.share.toFixed(1).padStart(5)}%  ${String(f.selfMs).padStart(8)} ms  ${f.frame}`);
  return lines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const file of process.argv.slice(2)) {
    console.log(file);
    for (const line of formatProfile(summarizeProfile(file, 25))) console.log(line);
  }
}
