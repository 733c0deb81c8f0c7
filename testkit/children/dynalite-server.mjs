/**
 * dynalite (in-memory DynamoDB) on 127.0.0.1, in a child process so it can be killed and
 * restarted like DynamoDB Local. Tables become ACTIVE at once.
 *
 * Usage: node dynalite-server.mjs [--path DIR] [--port N] [--hard-stop]; prints {"ready":true,"port":N}.
 *
 * The tests start it with no option: in memory, on a fresh port. The chaos suite, where Java is missing,
 * restarts it on the same port (`--port`) with a LevelDB folder that outlives a restart (`--path`; in
 * memory a restart would lose every table), and stopped hard (`--hard-stop`: open connections are closed
 * at once).
 */
import { parseArgs } from 'node:util';
import dynalite from 'dynalite';
import { announce, exitWithParent } from './parent-watch.mjs';

const usage = 'usage: dynalite-server.mjs [--path DIR] [--port N] [--hard-stop]\n';
let parsed;
try {
  parsed = parseArgs({
    options: {
      path: { type: 'string' },
      port: { type: 'string', default: '0' },
      'hard-stop': { type: 'boolean', default: false },
    },
  });
} catch {
  process.stderr.write(usage);
  process.exit(2);
}
const { values } = parsed;
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || values.path === '') {
  process.stderr.write(usage);
  process.exit(2);
}
const server = dynalite({
  ...(values.path !== undefined ? { path: values.path } : {}),
  createTableMs: 0,
  deleteTableMs: 0,
  updateTableMs: 0,
});
exitWithParent(
  () =>
    new Promise((resolve) => {
      if (values['hard-stop']) server.closeAllConnections?.();
      server.close(() => resolve());
    }),
);
server.listen(port, '127.0.0.1', () => announce({ port: server.address().port }));
