/**
 * Service kind → implementation. Kinds whose implementation has not landed are refused at start with
 * a clear message instead of starting something half-built.
 */
import { echoService } from '../actors/echo/echo.js';
import { execService } from '../actors/exec/exec.js';
import { gatewayService } from '../actors/gateway/gateway.js';
import { httpClientService } from '../actors/httpclient/httpclient.js';
import { queueService } from '../actors/queue/queue.js';
import { sqlService } from '../actors/sql/sql.js';
import { storageService } from '../actors/hive/storage.js';
import { syslogService } from '../actors/syslog/syslog.js';
import type { ServiceKind } from '../config/registry.js';
import { ConfigError } from '../protocol/errors.js';
import type { ServiceDefinition } from './service.js';

const IMPLEMENTATIONS: Partial<Record<ServiceKind, ServiceDefinition>> = {
  echo: echoService as unknown as ServiceDefinition,
  exec: execService as unknown as ServiceDefinition,
  gateway: gatewayService as unknown as ServiceDefinition,
  queue: queueService as unknown as ServiceDefinition,
  sql: sqlService as unknown as ServiceDefinition,
  httpclient: httpClientService as unknown as ServiceDefinition,
  storage: storageService as unknown as ServiceDefinition,
  syslog: syslogService as unknown as ServiceDefinition,
};

/** The implementation of a kind, or a ConfigError when this build does not have it yet. */
export function serviceDefinition(kind: ServiceKind): ServiceDefinition {
  const def = IMPLEMENTATIONS[kind];
  if (!def) throw new ConfigError(`service '${kind}' is specified but not implemented in this build yet; available: ${availableKinds().join(', ')}`);
  return def;
}

export function availableKinds(): ServiceKind[] {
  return Object.keys(IMPLEMENTATIONS) as ServiceKind[];
}
