/**
 * The registry: service kind → implementation. The one module that sees every service, so the node
 * (node/node.ts) reaches them through it and nothing below the actors knows them. A kind the config
 * registry lists without an implementation here is a compile error.
 */
import type { ServiceKind } from '../config/registry.js';
import { echoService } from './echo/echo.js';
import { execService } from './exec/exec.js';
import { gatewayService } from './gateway/gateway.js';
import { httpClientService } from './httpclient/httpclient.js';
import { queueService } from './queue/queue.js';
import type { ServiceDefinition } from './service/context.js';
import { sqlService } from './sql/sql.js';
import { storageService } from './storage/storage.js';
import { syslogService } from './syslog/syslog.js';

export const SERVICE_DEFINITIONS: Readonly<Record<ServiceKind, ServiceDefinition>> = {
  echo: echoService,
  exec: execService,
  gateway: gatewayService,
  queue: queueService,
  sql: sqlService,
  httpclient: httpClientService,
  storage: storageService,
  syslog: syslogService,
};
