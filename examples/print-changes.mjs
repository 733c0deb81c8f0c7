#!/usr/bin/env node
// A downstream consumer in a few lines: reads `catalog-sync changes --json` from stdin, one commit per line, and
// prints what changed. Replace the body of the loop with your indexer; see the README, "Consuming the mirror".
//
// With --ack PATH it writes each commit's key to PATH (a named pipe) once the commit is done, and catalog-sync, given
// the same pipe as --ack-from, checkpoints only those: a crash of this script loses nothing it did not finish.
//
//   mkfifo acks
//   catalog-sync changes --follow --json --consumer printer --ack-from acks | node examples/print-changes.mjs --ack acks
//
// --delay MS makes it a slow reader (MS per commit), to watch its lag with `catalog-sync consumers`.
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { ack: { type: 'string' }, delay: { type: 'string' } } });
const delayMs = Number(values.delay ?? 0);
const acks = values.ack === undefined ? undefined : createWriteStream(values.ack);

// `… | node examples/print-changes.mjs | head`: the reader went away, so stop quietly.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue;
  const commit = JSON.parse(line);
  if (commit.heartbeat !== undefined) continue; // `--heartbeat`: catalog-sync is alive and caught up
  const changes = commit.leaves.map((leaf) => `${leaf.type === 'PackageDelete' ? '-' : '+'}${leaf.id}@${leaf.version}`);
  process.stdout.write(`${commit.commitTimeStamp} ${commit.commitKey} ${changes.join(' ')}\n`);
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs)); // your indexer's work
  acks?.write(`${commit.commitKey}\n`); // done with this commit: catalog-sync may checkpoint it
}
acks?.end();
