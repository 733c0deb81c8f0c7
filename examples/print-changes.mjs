#!/usr/bin/env node
// A downstream consumer in a dozen lines: reads `catalog-sync changes --json` from stdin, one commit per line, and
// prints what changed. Replace the body of the loop with your indexer; see the README, "Consuming the mirror".
//
//   catalog-sync changes --follow --json --consumer printer | node examples/print-changes.mjs
import { createInterface } from 'node:readline';

// `… | node examples/print-changes.mjs | head`: the reader went away, so stop quietly.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue;
  const commit = JSON.parse(line);
  const changes = commit.leaves.map((leaf) => `${leaf.type === 'PackageDelete' ? '-' : '+'}${leaf.id}@${leaf.version}`);
  process.stdout.write(`${commit.commitTimeStamp} ${commit.commitKey} ${changes.join(' ')}\n`);
}
