/**
 * A setup file of the test projects (vitest.config.ts), run before each test file: most projects' files share their
 * worker process (`isolate: false`), so what a file leaves in `process.env` would reach the files after it in that
 * worker (seen: a variable one file set was there in the next). The environment as the file found it is put back
 * after its last test, whatever the file did.
 */
import { afterAll } from 'vitest';

/** Takes `process.env` as it is now; the function returned puts it back so (added keys removed, others restored). */
export function snapshotEnvironment(): () => void {
  const found = { ...process.env };
  return () => {
    for (const key of Object.keys(process.env)) if (!(key in found)) delete process.env[key];
    Object.assign(process.env, found);
  };
}

afterAll(snapshotEnvironment());
