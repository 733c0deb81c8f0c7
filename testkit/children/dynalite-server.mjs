/**
 * dynalite (in-memory DynamoDB) on 127.0.0.1, in a child process so it can be killed and
 * restarted like DynamoDB Local. Tables become ACTIVE at once.
 *
 * Usage: node dynalite-server.mjs; prints {"ready":true,"port":N}.
 */
import dynalite from 'dynalite';
import { announce, exitWithParent } from './parent-watch.mjs';

const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
exitWithParent(() => new Promise((resolve) => server.close(() => resolve())));
server.listen(0, '127.0.0.1', () => announce({ port: server.address().port }));
