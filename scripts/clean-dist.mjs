// Empties the build's output folders before tsc writes them: tsc never removes the output of a source file that
// was deleted or moved, and `files` in package.json would ship such a stale file in the tarball.
import { rmSync } from 'node:fs';

for (const folder of ['dist/lambda', 'dist/infra', 'dist/cli'])
  rmSync(new URL(`../${folder}`, import.meta.url), { recursive: true, force: true });
