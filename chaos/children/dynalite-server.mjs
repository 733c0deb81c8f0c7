/**
 * dynalite for the chaos suite when Java is missing: a fixed port and a LevelDB folder that outlive a
 * restart (in memory, a restart would lose every table).
 *
 * Usage: node dynalite-server.mjs <directory> <port>; prints {"ready":true,"port":N}.
 */
import dynalite from 'dynalite';
import { announce, exitWithParent } from '../../testkit/children/parent-watch.mjs';

const [path, portText] = process.argv.slice(2);
if (!path || !portText) {
  process.stderr.write('usage: dynalite-server.mjs <directory> <port>\n');
  process.exit(2);
}
const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
exitWithParent(() => new Promise((resolve) => {
  server.closeAllConnections?.();
  server.close(() => resolve());
}));
server.listen(Number(portText), '127.0.0.1', () => announce({ port: server.address().port }));
