/** The V8 CPU profiler around one part of a process (not its module loading or setup). */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

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
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}
