/**
 * Local DynamoDB and S3 for integration tests: starting the emulators (emulator-processes.ts) and
 * talking to them (emulator-clients.ts). See those modules for the details and the emulators' quirks.
 */
export { startDynamo, startS3, type DynamoEmulator, type DynamoKind, type S3Emulator } from './emulator-processes.js';
export { clientsFor, createBucket, createCursorTable, type EmulatorClients } from './emulator-clients.js';
