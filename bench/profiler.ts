/** The V8 CPU profiler around one part of a process (not its module loading or setup). */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout's root as a URL (`file:///…/`): written as {@link REPO_IN_PROFILES} so that a kept profile names no machine path. */
const REPO_URL = pathToFileURL(fileURLToPath(new URL('../../', import.meta.url))).href;
/** What a kept profile says instead of the checkout's root (profile-summary's categories read the paths under it). */
export const REPO_IN_PROFILES = 'file:///catalog-sync/';

/** Runs `body` under the V8 CPU profiler (only the measured part: not module loading or setup). */
export async function profiled<T>(file: string | undefined, body: () => Promise<T>): Promise<T> {
  if (!file) return body();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  try {
    return await body();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile).replaceAll(REPO_URL, REPO_IN_PROFILES));
    session.disconnect();
  }
}
