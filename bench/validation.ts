/**
 * Leaf validation cost, in a process of its own: `parseLeaf` (JSON parse, zod schema, checks against the page
 * item) over every leaf of a generated catalog, round after round. The first round is what a cold Lambda pays
 * (nothing JIT-compiled yet); the median of the others is a warm one. CPU time, not wall time: this is the
 * per-leaf CPU the engine spends on validation, to set against its CPU per leaf in the scenarios.
 */
import { parseLeaf } from '../lambda/catalog/parsers/index.js';
import { generateCatalog } from '../testkit/index.js';
import { leafCases } from './leaf-cases.js';
import { median, round } from './stats.js';

/** argv[2] of this process. */
export interface ValidationConfig {
  readonly commits: number;
  readonly rounds: number;
  readonly seed: number;
}

export interface ValidationResult {
  readonly leaves: number;
  readonly meanLeafBytes: number;
  /** CPU per leaf in the first round, µs. */
  readonly coldMicrosPerLeaf: number;
  /** Median CPU per leaf over the other rounds, µs. */
  readonly warmMicrosPerLeaf: number;
}

const ORIGIN = 'https://api.nuget.org';

function main(): void {
  const config = JSON.parse(process.argv[2] ?? '{}') as ValidationConfig;
  const catalog = generateCatalog({ commits: config.commits, seed: config.seed });
  const cases = leafCases(catalog, ORIGIN);
  const perLeaf: number[] = [];
  for (let i = 0; i < config.rounds; i++) {
    const start = process.cpuUsage();
    for (const c of cases) parseLeaf(c.body, c.url, c.item);
    const used = process.cpuUsage(start);
    perLeaf.push((used.user + used.system) / cases.length);
  }
  const result: ValidationResult = {
    leaves: cases.length,
    meanLeafBytes: Math.round(cases.reduce((n, c) => n + c.body.length, 0) / cases.length),
    coldMicrosPerLeaf: round(perLeaf[0]!, 1),
    warmMicrosPerLeaf: round(median(perLeaf.slice(1)), 1),
  };
  process.send!({ type: 'result', result }, () => process.exit(0));
}

try {
  main();
} catch (error) {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
}
