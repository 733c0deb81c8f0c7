/**
 * Where the Lambda handlers' code is, for NodejsFunction's bundling, in the two places the constructs run from:
 *
 * - **this repository** (`infra/` run by tsx: `cdk synth`, the tests): the TypeScript sources under `lambda/`,
 *   bundled against the repository's own `package-lock.json` (the versions the tests exercise);
 * - **an installed package** (`import { CatalogSync } from 'catalog-sync/cdk'`, compiled to `dist/infra/`):
 *   the compiled handlers under `dist/lambda/` (the package ships no TypeScript sources and no lock file),
 *   with the consuming app's lock file and project root, which NodejsFunction finds from the working directory
 *   as it does for any function of that app. The app needs esbuild (a devDependency) or Docker to bundle.
 *
 * Both are decided by what exists beside this file, so nothing has to be configured.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder two levels up: the repository root, or `dist/` of an installed package. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where the handlers are read from and bundled against. */
export interface HandlerCode {
  /** The entry file of the handler. */
  readonly entry: string;
  /** The project root and lock file, in the repository; `{}` in an installed package (NodejsFunction's defaults). */
  readonly project: { readonly projectRoot?: string; readonly depsLockFilePath?: string };
}

/**
 * The entry of a handler, named by its path under `lambda/` without extension (`handler`, `backfill/worker`).
 * Throws when neither the source nor the compiled file is there (a broken package).
 */
export function handlerCode(name: string): HandlerCode {
  const source = join(ROOT, 'lambda', `${name}.ts`);
  const lockFile = join(ROOT, 'package-lock.json');
  if (existsSync(source) && existsSync(lockFile))
    return { entry: source, project: { projectRoot: ROOT, depsLockFilePath: lockFile } };
  const compiled = join(ROOT, 'lambda', `${name}.js`);
  if (existsSync(compiled)) return { entry: compiled, project: {} };
  throw new Error(
    `catalog-sync: the Lambda handler ${name} is missing: neither ${source} nor ${compiled} exists (reinstall the package)`,
  );
}
