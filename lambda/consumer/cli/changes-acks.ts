/**
 * `changes --consumer NAME --ack-from PATH`: the pipe form at least once (issue 29). The program reading the lines
 * writes back, on PATH (a named pipe, or `-` for this command's stdin when it runs `changes` as its child), the commit
 * key of each commit it finished, one a line (a commit's JSON line echoed back does too); the cursor moves only to
 * acknowledged commits.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Acknowledgements } from '../acknowledgements.js';
import { AcknowledgementError } from '../errors.js';

/** What a line of the acknowledgement channel says: a commit key, or a JSON object with one. */
export function ackedKey(line: string): string {
  const text = line.trim();
  if (/^[0-9A-Za-z]{12}$/.test(text)) return text;
  if (text.startsWith('{')) {
    try {
      const value = JSON.parse(text) as { commitKey?: unknown };
      if (typeof value.commitKey === 'string') return value.commitKey;
    } catch {
      // named below
    }
  }
  throw new AcknowledgementError(
    `acknowledgement ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)} is neither a commit key nor a JSON line with a "commitKey"`,
  );
}

/**
 * Reads acknowledgements from `path` (`-`: stdin) into a new {@link Acknowledgements}; `onEnd` is told once when the
 * channel ends (the reader closed it, or a bad line: the error), `onSettling` when `changes` has written its last line.
 */
export function readAcknowledgements(
  path: string,
  onEnd: (error?: Error) => void,
  onSettling: () => void,
): Acknowledgements {
  const acks = new Acknowledgements(undefined, { onSettling });
  const input = path === '-' ? process.stdin : createReadStream(path);
  const where = path === '-' ? 'stdin' : path;
  let ended = false;
  const end = (error?: Error): void => {
    if (ended) return;
    ended = true;
    if (error !== undefined) acks.fail(error);
    else acks.close(`the reader closed its acknowledgements (${where})`);
    onEnd(error);
  };
  input.on('error', (error: Error) =>
    end(new AcknowledgementError(`--ack-from ${where}: ${error.message}`, { cause: error })),
  );
  const lines = createInterface({ input, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (ended || line.trim() === '') return;
    let key: string;
    try {
      key = ackedKey(line);
    } catch (error) {
      end(error as Error);
      return;
    }
    acks.ack(key).catch((error: unknown) => end(error as Error));
  });
  lines.on('close', () => end());
  return acks;
}
