/**
 * Id filters (`INCLUDE_IDS` / `EXCLUDE_IDS`, `--include` / `--exclude`): case-insensitive globs on the package id.
 * A pattern is made of NuGet id characters (`A-Z a-z 0-9 . _ -`) and the wildcards `*` (any run of characters,
 * none included) and `?` (one character). An id is kept when it matches an include pattern (or none is given) and
 * no exclude pattern. docs/contract.md, "Id filters", is the specification.
 */
/** Longer patterns are refused: a NuGet package id has at most 100 characters. */
const MAX_PATTERN_LENGTH = 200;
const PATTERN = /^[A-Za-z0-9._\-*?]+$/;

/** An id filter in its canonical form: patterns lower-cased, without duplicates, sorted. */
export interface IdFilter {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/** What is wrong with `pattern` as an id pattern, or undefined when nothing is (settings.ts throws it). */
export function idPatternProblem(pattern: string): string | undefined {
  if (pattern.length <= MAX_PATTERN_LENGTH && PATTERN.test(pattern)) return undefined;
  return `${JSON.stringify(pattern.slice(0, MAX_PATTERN_LENGTH))} is not an id pattern: use NuGet id characters (A-Z a-z 0-9 . _ -) with * and ?, e.g. Newtonsoft.* (at most ${MAX_PATTERN_LENGTH} characters)`;
}

const canonical = (patterns: readonly string[]): string[] => [...new Set(patterns.map((p) => p.toLowerCase()))].sort();

/** The filter of valid `include` and `exclude` patterns (see {@link idPatternProblem}), or undefined when both are empty. */
export function idFilterOf(include: readonly string[], exclude: readonly string[]): IdFilter | undefined {
  const filter = { include: canonical(include), exclude: canonical(exclude) };
  return filter.include.length === 0 && filter.exclude.length === 0 ? undefined : filter;
}

function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

const compiled = new WeakMap<IdFilter, (id: string) => boolean>();

/** Whether `filter` keeps the package `id` (always true without a filter). */
export function keepsId(filter: IdFilter | undefined, id: string): boolean {
  if (filter === undefined) return true;
  let test = compiled.get(filter);
  if (test === undefined) {
    const include = filter.include.map(globToRegExp);
    const exclude = filter.exclude.map(globToRegExp);
    test = (candidate) =>
      (include.length === 0 || include.some((r) => r.test(candidate))) && !exclude.some((r) => r.test(candidate));
    compiled.set(filter, test);
  }
  return test(id);
}

/** Whether two filters (canonical, or none) are the same. */
export function sameIdFilter(a: IdFilter | undefined, b: IdFilter | undefined): boolean {
  return JSON.stringify(a ?? { include: [], exclude: [] }) === JSON.stringify(b ?? { include: [], exclude: [] });
}

/**
 * Whether `next` may keep an id `previous` left out: then history before the change lacks leaves `next` wants.
 * Decided on the patterns, conservatively: any include pattern or removed exclude pattern not in `previous` counts.
 */
export function widens(previous: IdFilter | undefined, next: IdFilter | undefined): boolean {
  if (previous === undefined) return false;
  if (next === undefined) return true;
  if (
    previous.include.length > 0 &&
    (next.include.length === 0 || next.include.some((p) => !previous.include.includes(p)))
  )
    return true;
  return previous.exclude.some((p) => !next.exclude.includes(p));
}

/** `include a*, b; exclude c` or `no filter`. */
export function shownIdFilter(filter: IdFilter | undefined): string {
  if (filter === undefined) return 'no filter';
  const parts = [
    filter.include.length > 0 ? `include ${filter.include.join(', ')}` : '',
    filter.exclude.length > 0 ? `exclude ${filter.exclude.join(', ')}` : '',
  ];
  return parts.filter((p) => p !== '').join('; ');
}

/** The filter as CLI flags: `--include a* --exclude b` (empty without a filter). */
export function idFilterFlags(filter: IdFilter | undefined): string {
  if (filter === undefined) return '';
  return [...filter.include.map((p) => `--include '${p}'`), ...filter.exclude.map((p) => `--exclude '${p}'`)].join(' ');
}
