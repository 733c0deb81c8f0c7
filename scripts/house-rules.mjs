/**
 * The intended house of catalog-sync (docs/development.md, "The house"), as rules `npm run house` checks.
 *
 * The floors are where the code is meant to live; the tree keeps every rule (test/unit/house.test.ts runs
 * `npm run house -- --strict` and fails on any broken rule, loop, shell use in the engine or file over the limit).
 *
 * A rule: `from.path` is a regex on the importing file's path; `to.path` / `to.pathNot` are regexes on the
 * imported file's path (project files only, relative to the repository root). `to.core` makes the rule
 * look at node's own modules instead (`to.path` then matches the specifier, e.g. `node:process`), and
 * `to.circular` makes it the rule against import loops.
 */

/**
 * Floors from the top down; the patterns do not overlap, so a file belongs to one floor at most.
 * `rank`: a file may import from its own floor and from floors of a lower rank only.
 */
export const FLOORS = [
  { name: 'tools', rank: 9, path: '^(test/|bench/|chaos/|scripts/)', what: 'tests, benchmarks, chaos suite, demo' },
  { name: 'testkit', rank: 8, path: '^testkit/', what: 'replica, generator, emulators, verifiers' },
  { name: 'infra', rank: 7, path: '^infra/', what: 'CDK constructs: the contract and the handlers\' paths, never the engine' },
  { name: 'faces', rank: 6, path: '^lambda/(index\\.ts$|handler\\.ts$|handler/|consumer-lambda\\.ts$|view-lambda\\.ts$|cli\\.ts$|cli/|backfill/)', what: 'settings in, run summary out; no sync logic (index.ts: the library face)' },
  { name: 'view', rank: 5.5, path: '^lambda/view/', what: 'the latest view: package indexes kept by a built-in consumer' },
  { name: 'consumer', rank: 5, path: '^lambda/consumer/', what: 'reading the mirror back in commit order; named consumer cursors' },
  { name: 'engine', rank: 5, path: '^lambda/sync/', what: 'slice planning, commit stream, leaf pipeline, manifests, checkpoints' },
  { name: 'catalog', rank: 4, path: '^lambda/catalog/', what: 'the protocol: HTTP with bounds, schemas, stale-copy rules' },
  { name: 'stores', rank: 3, path: '^lambda/stores/', what: 'cursor, run log, snapshots: DynamoDB + S3 and the local folder' },
  { name: 'ids', rank: 2, path: '^lambda/ids/', what: 'kuuid ids and base62' },
  { name: 'contract', rank: 1, path: '^lambda/contract/', what: 'exact time, identity, key layout, settings, RunSummary, errors' },
];

/** Where a floor name is used in a rule below, its path pattern. */
const pathOf = (name) => FLOORS.find((floor) => floor.name === name).path;
const anyOf = (names) => names.map(pathOf).join('|');

/** One rule per floor: nothing it imports may sit on a higher floor. */
const noUpwardImports = FLOORS.filter((floor) => floor.rank < 9).map((floor) => {
  const higher = FLOORS.filter((other) => other.rank > floor.rank).map((other) => other.name);
  return {
    name: `${floor.name}-imports-no-higher-floor`,
    comment: `${floor.name} may import only floors below it, never ${higher.join(', ')}`,
    severity: 'error',
    from: { path: floor.path },
    to: { path: anyOf(higher) },
  };
});

export const RULES = [
  ...noUpwardImports,
  {
    name: 'no-cycle',
    comment: 'no loop between files: a loop makes both files one unit that cannot be read or moved apart',
    severity: 'error',
    from: {},
    to: { circular: true },
  },
  {
    name: 'ids-is-a-leaf',
    comment: 'ids import nothing of the project but the contract',
    severity: 'error',
    from: { path: pathOf('ids') },
    to: { path: '^(lambda|infra|test|testkit|bench|chaos|scripts)/', pathNot: anyOf(['ids', 'contract']) },
  },
  {
    name: 'contract-is-a-leaf',
    comment: 'the contract is the ground floor: it imports nothing of the project',
    severity: 'error',
    from: { path: pathOf('contract') },
    to: { path: '^(lambda|infra|test|testkit|bench|chaos|scripts)/', pathNot: pathOf('contract') },
  },
  {
    name: 'catalog-knows-no-stores',
    comment: 'the catalog client knows nothing of where leaves go',
    severity: 'error',
    from: { path: pathOf('catalog') },
    to: { path: pathOf('stores') },
  },
  {
    name: 'stores-know-no-catalog',
    comment: 'stores know nothing of the protocol',
    severity: 'error',
    from: { path: pathOf('stores') },
    to: { path: pathOf('catalog') },
  },
  {
    name: 'infra-knows-only-the-contract',
    comment: 'infra imports lambda/contract/ and nothing else of lambda/ (handler entry paths are strings, not imports)',
    severity: 'error',
    from: { path: pathOf('infra') },
    to: { path: '^lambda/', pathNot: pathOf('contract') },
  },
  {
    name: 'engine-knows-no-shell',
    comment: 'the engine imports no shell module; `npm run house` also greps it for process and console',
    severity: 'error',
    from: { path: anyOf(['engine', 'consumer', 'view']) },
    to: { core: true, path: '^(node:)?(process|readline|tty|child_process)$' },
  },
  {
    name: 'bench-chaos-through-faces',
    comment: 'bench/ and chaos/ import lambda/ and the testkit through their index modules only',
    severity: 'error',
    from: { path: '^(bench|chaos)/' },
    to: { path: '^(lambda/|testkit/)', pathNot: '/index\\.m?ts$' },
  },
];
