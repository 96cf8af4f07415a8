/**
 * hivenode's public API: start nodes programmatically, the protocol types and helpers, and the
 * configuration tables. (The Go template engine is the `hivenode/template` subpath export.)
 */
export { HiveNode } from './node/node.js';
export type { NodeOptions, ServicePlan, NodeService } from './node/node.js';
export type { HiveClient } from './actors/hive/client.js';
export * from './protocol/index.js';
export { SERVICES, ServiceKind } from './config/registry.js';
export type { ServiceInfo } from './config/registry.js';
export { loadNodeFile, parseNodeFile } from './config/node-file.js';
export { commandLineLayer, compileConfig, environmentLayer } from './config/resolve.js';
export type { Layer } from './config/resolve.js';
