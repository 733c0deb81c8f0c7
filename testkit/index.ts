/**
 * The test kit's face: what bench/ and chaos/ use of it. A generated catalog and the replica that serves it,
 * catalog time, the PRNG, the emulators and child processes, the CLI as a process, and the verifiers of what a
 * run left behind. Tests may import the kit's files directly; files inside testkit/ import each other directly
 * (importing the face from inside would make a loop).
 *
 * Importing this face loads the AWS SDK (emulator clients) and vitest's `inject` (the sync harness's shared
 * emulators); both load fine outside a vitest run.
 */
export { CATALOG_CONTEXT, CATALOG_INDEX_PATH, pagePath, SERVICE_INDEX_PATH } from './catalog-documents.js';
export {
  appendCommits,
  generateCatalog,
  leafBody,
  type GeneratedCatalog,
  type GeneratedLeaf,
} from './catalog-generator.js';
export { layoutPages } from './catalog-layout.js';
export { renderLeafBody } from './leaf-body.js';
export { grownLeafParts } from './large-leaves.js';
export { CatalogReplica } from './catalog-replica.js';
export { attachPackages, generatedPackage, type PackageOptions } from './catalog-packages.js';
export { writeMirror } from './view-mirror.js';
export { FlatContainer, FLAT_CONTAINER_PATH, type ServedPackage } from './flat-container.js';
export { buildNupkg, packageDigest, type NupkgDependency, type NupkgSpec } from './nupkg.js';
export { StaticFeedServer, type StaticFeedRequest } from './static-feed-server.js';
export { ForwardProxy, type ForwardProxyOptions, type ProxiedRequest } from './forward-proxy.js';
export type { ServedDocument } from './replica-source.js';
export { negotiateCoding, type ContentCoding } from './http-encoding.js';
export { formatTicks, parseTicks, TICKS_PER_SECOND } from './catalog-time.js';
export { mulberry32, type Prng } from './prng.js';
export {
  clientsFor,
  createBucket,
  createCursorTable,
  startDynamo,
  startS3,
  type EmulatorClients,
} from './emulators.js';
export { dynamoDbLocalDirectory, freePort, javaWorks, untilAnswering } from './emulator-processes.js';
export { childScript, startChild, waitForReady, type ManagedChild } from './child-processes.js';
export { CLI, startCli, type CliResult } from './cli-process.js';
export { uniqueName } from './env.js';
export { listFiles, localKeys, readLocalCursor, readLocalState, verifyLocal } from './local-verify.js';
export { RecordingCursorStore, SyncHarness } from './sync-harness.js';
