/**
 * The intended house of catalog-sync (docs/development.md, "The house"), as rules `npm run house` checks.
 *
 * lambda/ is a ground (the contract, ids, the stores and the catalog client), a runtime kit that only faces use,
 * the wings (one folder per product, owning its engine and its faces) and the program (cli.ts, index.ts); nothing
 * imports upward. Wings import each other only along {@link WING_GRAPH}. A wing's engine (every file of the wing
 * but its faces: `lambda.ts` or `lambda/`, `cli.ts` or `cli/`) knows no shell and no runtime kit.
 *
 * A rule: `from.path` is a regex on the importing file's path; `to.path` / `to.pathNot` are regexes on the
 * imported file's path (project files only, relative to the repository root). `to.core` makes the rule
 * look at node's own modules instead (`to.path` then matches the specifier, e.g. `node:process`), and
 * `to.circular` makes it the rule against import loops. test/unit/house.test.ts breaks each clause in a small
 * house of its own and checks that `npm run house -- --strict` fails naming it.
 */

/**
 * The wings and whom each may import: a new product is one new folder here and one line below. `feed` and
 * `serve` are planned (no folder yet); a wing without a folder costs nothing.
 */
export const WING_GRAPH = {
  sync: [],
  backfill: ['sync'],
  verify: ['sync', 'consumer', 'view', 'feed'],
  consumer: [],
  view: ['consumer'],
  feed: ['consumer', 'view'],
  serve: ['view', 'feed'],
};

/** What each wing is, for the report. */
const WING_WHAT = {
  sync: 'the follower: one bounded slice, its Lambda, run/status/runs/quarantine',
  backfill: 'plan, ranges, finish; its Lambdas and `backfill` with worker processes',
  verify: 'the audit of a mirror against the catalog, the drift report of its feed, their repairs, `verify`',
  consumer: 'the mirror read back in order, named consumers, their Lambda, `changes`',
  view: 'the latest view kept by a built-in consumer, its Lambda, `view`/`latest`',
  feed: 'planned: the private feed and its .nupkg mirror',
  serve: 'the feed of a folder over HTTP, `serve`',
};

/** The wings in an order where each comes after those it imports; throws when the declared graph has a circle. */
export function wingOrder(graph = WING_GRAPH) {
  const order = [];
  const state = new Map();
  const visit = (wing, path) => {
    if (!(wing in graph))
      throw new Error(`house-rules: wing ${path.at(-1)} imports ${wing}, which is not a declared wing`);
    if (state.get(wing) === 'done') return;
    if (state.get(wing) === 'open')
      throw new Error(
        `house-rules: the wing graph has a circle: ${[...path.slice(path.indexOf(wing)), wing].join(' -> ')}`,
      );
    state.set(wing, 'open');
    for (const used of graph[wing]) visit(used, [...path, wing]);
    state.set(wing, 'done');
    order.push(wing);
  };
  for (const wing of Object.keys(graph)) visit(wing, []);
  return order;
}
const WINGS = wingOrder();

const FACE = '(lambda/|lambda\\.ts$|cli/|cli\\.ts$)';
/** Every wing's folder. */
const ANY_WING = `^lambda/(${WINGS.join('|')})/`;
/** A wing's engine: its files but the faces. */
const engineOf = (wing) => `^lambda/${wing}/(?!${FACE})`;
/** Every engine file of every wing: no `process`, no `console` (house.mjs greps them). */
export const SHELL_FREE = `^lambda/(${WINGS.join('|')})/(?!${FACE})`;
/** A file here that is on no floor is an error: lambda/'s root holds only the program, every product is a wing. */
export const MUST_BE_PLACED = '^lambda/';

/**
 * Floors from the top down; the patterns do not overlap, so a file belongs to one floor at most.
 * `rank`: a file may import from its own floor and from floors of a lower rank only. The wings share a rank:
 * whom a wing may import is the wing graph's to say.
 */
export const FLOORS = [
  { name: 'tools', rank: 11, path: '^(test/|bench/|chaos/|scripts/)', what: 'tests, benchmarks, chaos suite, demo' },
  { name: 'testkit', rank: 10, path: '^testkit/', what: 'replica, generator, emulators, verifiers' },
  {
    name: 'infra',
    rank: 9,
    path: '^infra/',
    what: "CDK constructs: the contract and the handlers' paths, never a wing",
  },
  {
    name: 'program',
    rank: 8,
    path: '^lambda/(cli|index)\\.ts$',
    what: "cli.ts registers each wing's commands; index.ts is the library face",
  },
  ...WINGS.map((wing) => ({
    name: wing,
    rank: 7,
    path: `^lambda/${wing}/`,
    what: WING_WHAT[wing] ?? 'a wing',
    wing: true,
  })),
  {
    name: 'runtime',
    rank: 6,
    path: '^lambda/runtime/',
    what: 'the kit only faces use: Lambda settings, Powertools set-up, shared CLI flags',
  },
  {
    name: 'catalog',
    rank: 4,
    path: '^lambda/catalog/',
    what: 'the protocol: HTTP with bounds, schemas, stale-copy rules',
  },
  {
    name: 'stores',
    rank: 3,
    path: '^lambda/stores/',
    what: 'cursor, run log, snapshots: DynamoDB + S3 and the local folder',
  },
  { name: 'ids', rank: 2, path: '^lambda/ids/', what: 'kuuid ids and the listing bound' },
  {
    name: 'contract',
    rank: 1,
    path: '^lambda/contract/',
    what: 'exact time, identity, key layout, settings, RunSummary, errors',
  },
];

/** Where a floor name is used in a rule below, its path pattern. */
const pathOf = (name) => FLOORS.find((floor) => floor.name === name).path;
const anyOf = (names) => names.map(pathOf).join('|');
const PROJECT = '^(lambda|infra|test|testkit|bench|chaos|scripts)/';

/** One rule per floor: nothing it imports may sit on a higher floor (a wing's rank is the wings': see the graph). */
const noUpwardImports = FLOORS.filter((floor) => floor.rank < 11).map((floor) => {
  const higher = FLOORS.filter((other) => other.rank > floor.rank);
  const named = [...new Set(higher.map((other) => (other.wing ? 'a wing' : other.name)))];
  return {
    name: `${floor.name}-imports-no-higher-floor`,
    comment: `${floor.name} may import only floors below it, never ${named.join(', ')}`,
    severity: 'error',
    from: { path: floor.path },
    to: { path: higher.map((other) => other.path).join('|') },
  };
});

/** A wing imports, of the other wings, only those the graph gives it; its engine imports no face. */
const wingRules = WINGS.flatMap((wing) => {
  const others = WINGS.filter((other) => other !== wing && !WING_GRAPH[wing].includes(other));
  return [
    ...(others.length === 0
      ? []
      : [
          {
            name: WING_GRAPH[wing].length
              ? `${wing}-imports-only-${WING_GRAPH[wing].join('-and-')}`
              : `${wing}-imports-no-other-wing`,
            comment: `wings import each other only along the declared graph: ${wing} -> ${WING_GRAPH[wing].length ? WING_GRAPH[wing].join(', ') : 'no other wing'}`,
            severity: 'error',
            from: { path: `^lambda/${wing}/` },
            to: { path: `^lambda/(${others.join('|')})/` },
          },
        ]),
    {
      name: `${wing}-engine-knows-no-face`,
      comment: `${wing}'s engine imports no face (a wing's lambda/ or cli/) and no runtime kit: faces use the engine, not the other way`,
      severity: 'error',
      from: { path: engineOf(wing) },
      to: { path: `^lambda/(runtime/|[^/]+/${FACE})` },
    },
  ];
});

export const RULES = [
  ...noUpwardImports,
  ...wingRules,
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
    to: { path: PROJECT, pathNot: anyOf(['ids', 'contract']) },
  },
  {
    name: 'contract-is-a-leaf',
    comment: 'the contract is the ground floor: it imports nothing of the project',
    severity: 'error',
    from: { path: pathOf('contract') },
    to: { path: PROJECT, pathNot: pathOf('contract') },
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
    comment:
      'infra imports lambda/contract/ and nothing else of lambda/ (handler entry paths are strings, not imports)',
    severity: 'error',
    from: { path: pathOf('infra') },
    to: { path: '^lambda/', pathNot: pathOf('contract') },
  },
  {
    name: 'engines-know-no-shell',
    comment: "a wing's engine imports no shell module; `npm run house` also greps it for process and console",
    severity: 'error',
    from: { path: SHELL_FREE },
    to: { core: true, path: '^(node:)?(process|readline|tty|child_process)$' },
  },
  {
    name: 'program-through-faces',
    comment: 'the program imports a wing through its faces only: index.ts, cli/ or cli.ts, lambda/ or lambda.ts',
    severity: 'error',
    from: { path: pathOf('program') },
    to: { path: ANY_WING, pathNot: `^lambda/[^/]+/(index\\.ts$|${FACE})` },
  },
  {
    name: 'bench-chaos-through-faces',
    comment: 'bench/ and chaos/ import lambda/ and the testkit through their index modules only',
    severity: 'error',
    from: { path: '^(bench|chaos)/' },
    to: { path: '^(lambda/|testkit/)', pathNot: '/index\\.m?ts$' },
  },
];
