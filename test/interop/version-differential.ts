/**
 * The project's version rules against NuGet.Versioning's answers for the same inputs (probe-kit.ts `probeVersions`):
 * every disagreement, printed with both answers. The rules compared:
 * - validity: `parseNuGetVersion` reads exactly the strings NuGet reads;
 * - identity: `comparableVersion` (the S3 key's `{version}`) is NuGet's `ToNormalizedString().ToLowerInvariant()`;
 * - order: `compareVersions` (the latest view's order) refines `VersionComparer.Default`: it never reverses two
 *   versions NuGet orders, and orders two that NuGet holds equal only where their identities differ;
 * - refused versions: one whose identity NuGet also refuses sorts after every version NuGet reads; one whose
 *   identity NuGet reads (it was refused for its build metadata alone) sorts as that identity.
 */
import { comparableVersion } from '../../lambda/contract/identity.js';
import { parseNuGetVersion } from '../../lambda/contract/nuget-version.js';
import { compareVersions } from '../../lambda/contract/version-order.js';
import type { NuGetVersionAnswers } from './probe-kit.js';

/** What the differential found. */
export interface VersionDifferential {
  readonly inputs: number;
  readonly validForNuGet: number;
  /** One line per disagreement, both answers in it. */
  readonly disagreements: readonly string[];
}

/** JSON with everything outside printable ASCII escaped, so that no character hides in a message or a file. */
export const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const show = (text: string): string => asciiJson(text);

/** Compares the project's rules with NuGet's `answers` for `inputs` (which must hold the identity of each input). */
export function versionDifferential(inputs: readonly string[], nuget: NuGetVersionAnswers): VersionDifferential {
  const disagreements: string[] = [];
  const validity = new Map<string, boolean>();
  inputs.forEach((input, i) => validity.set(input, nuget.answers[i]!.valid));
  let valid = 0;

  inputs.forEach((input, i) => {
    const answer = nuget.answers[i]!;
    const ours = parseNuGetVersion(input) !== undefined;
    if (ours !== answer.valid)
      disagreements.push(
        `validity ${show(input)}: NuGet ${answer.valid ? 'reads' : 'refuses'} it, ours ${ours ? 'reads' : 'refuses'} it`,
      );
    if (!answer.valid) return;
    valid++;
    const key = comparableVersion(input);
    if (key !== answer.key) disagreements.push(`identity ${show(input)}: NuGet ${show(answer.key)}, ours ${show(key)}`);
  });

  // Between NuGet's consecutive groups: our greatest of the lower group before our least of the higher.
  const groups = nuget.order.map((group) => group.map((i) => inputs[i]!).sort(compareVersions));
  groups.forEach((group, g) => {
    for (let k = 1; k < group.length; k++) {
      const [a, b] = [group[0]!, group[k]!];
      const order = compareVersions(a, b);
      if ((order === 0) !== (comparableVersion(a) === comparableVersion(b))) {
        disagreements.push(
          `order ${show(a)} = ${show(b)} for NuGet; ours ${order} with identities ${show(comparableVersion(a))}, ${show(comparableVersion(b))}`,
        );
      }
    }
    const lower = groups[g - 1]?.at(-1);
    if (lower !== undefined && !(compareVersions(lower, group[0]!) < 0)) {
      disagreements.push(
        `order ${show(lower)} < ${show(group[0]!)} for NuGet; ours compareVersions = ${compareVersions(lower, group[0]!)}`,
      );
    }
  });
  const greatest = groups.at(-1)?.at(-1);

  inputs.forEach((input, i) => {
    if (nuget.answers[i]!.valid) return;
    const key = comparableVersion(input);
    const keyValid = validity.get(key);
    if (keyValid === undefined) throw new Error(`the identity ${show(key)} of ${show(input)} is not among the inputs`);
    if (keyValid && compareVersions(input, key) !== 0) {
      disagreements.push(
        `refused ${show(input)}: NuGet reads its identity ${show(key)}, but ours orders it apart (${compareVersions(input, key)})`,
      );
    }
    if (!keyValid && greatest !== undefined && !(compareVersions(input, greatest) > 0)) {
      disagreements.push(
        `refused ${show(input)} (identity ${show(key)}, refused too) sorts before ${show(greatest)}, a version NuGet reads`,
      );
    }
  });
  return { inputs: inputs.length, validForNuGet: valid, disagreements };
}
