/**
 * A setup file of the `integration-lambda` project (vitest.config.ts), run before each of its test files: those files
 * load a Lambda face, which reads its environment once, when loaded (testkit/lambda-face-files.ts). The project's files
 * share their worker processes, as the other integration files do (a fresh process for each cost about 20 CPU-s of a
 * run); the registry of the modules vitest loads (the project's own: lambda/, testkit/) is emptied first, so each
 * file loads every face afresh, as a fresh Lambda container would. node_modules (the AWS SDK, Powertools) stay loaded:
 * what a face reads at load is in its own module.
 */
import { vi } from 'vitest';

vi.resetModules();
