/**
 * Where the tests' CDK apps synthesize (test/infra/synth-kit.ts): without an outdir, each App leaves a cdk.outXXXX
 * folder in the system's temp. One folder per test file, made at its first app and removed after the file by
 * testkit/synth-folder-cleanup.ts, a setup file of every project: the files of a project share this module (loaded
 * once per worker process), and vitest ends its workers without their `exit` event. No aws-cdk-lib here, so that
 * the setup file costs the files that synthesize nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let out: string | undefined;

/** A new folder for one app, under this test file's synthesis folder. */
export function outdir(): string {
  out ??= mkdtempSync(join(tmpdir(), 'catalog-sync-stack-test-'));
  return mkdtempSync(join(out, 'app-'));
}

/** Removes this test file's synthesis folder, if it made one. */
export function removeSynthFolder(): void {
  if (out !== undefined) rmSync(out, { recursive: true, force: true });
  out = undefined;
}
