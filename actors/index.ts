/**
 * The registry: service kind → implementation. The one module that sees every service, so the node
 * (node/node.ts) reaches them through it and nothing below the actors knows them. A kind the config
 * registry lists without an implementation here is a compile error. Each kind's module is imported
 * when an instance of it starts (lazyService): a configuration compiles from its table alone.
 */
import { ECHO_PARAMS } from '../config/echo.js';
import { EXEC_PARAMS } from '../config/exec.js';
import { FLOW_PARAMS } from '../config/flow.js';
import { GATEWAY_PARAMS } from '../config/gateway.js';
import { HTTPCLIENT_PARAMS } from '../config/httpclient.js';
import { QUEUE_PARAMS } from '../config/queue.js';
import type { ServiceKind } from '../config/registry.js';
import { SERVICES } from '../config/registry.js';
import { compilerFor } from '../config/resolve.js';
import { SQL_PARAMS } from '../config/sql.js';
import { STORAGE_PARAMS } from '../config/storage.js';
import { SYSLOG_PARAMS } from '../config/syslog.js';
import type { ServiceDefinition } from './service/context.js';
import { lazyService } from './service/context.js';
import { importModule } from '../protocol/import-module.js';

export const SERVICE_DEFINITIONS: Readonly<Record<ServiceKind, ServiceDefinition>> = {
  echo: lazyService(
    SERVICES.echo,
    compilerFor('echo', ECHO_PARAMS),
    async () => (await importModule(import.meta.url, './echo/echo.js', () => import('./echo/echo.js'))).echoService,
  ),
  exec: lazyService(
    SERVICES.exec,
    compilerFor('exec', EXEC_PARAMS),
    async () => (await importModule(import.meta.url, './exec/exec.js', () => import('./exec/exec.js'))).execService,
  ),
  gateway: lazyService(
    SERVICES.gateway,
    compilerFor('gateway', GATEWAY_PARAMS),
    async () =>
      (await importModule(import.meta.url, './gateway/gateway.js', () => import('./gateway/gateway.js')))
        .gatewayService,
  ),
  queue: lazyService(
    SERVICES.queue,
    compilerFor('queue', QUEUE_PARAMS),
    async () =>
      (await importModule(import.meta.url, './queue/queue.js', () => import('./queue/queue.js'))).queueService,
  ),
  sql: lazyService(
    SERVICES.sql,
    compilerFor('sql', SQL_PARAMS),
    async () => (await importModule(import.meta.url, './sql/sql.js', () => import('./sql/sql.js'))).sqlService,
  ),
  httpclient: lazyService(
    SERVICES.httpclient,
    compilerFor('httpclient', HTTPCLIENT_PARAMS),
    async () =>
      (await importModule(import.meta.url, './httpclient/httpclient.js', () => import('./httpclient/httpclient.js')))
        .httpClientService,
  ),
  storage: lazyService(
    SERVICES.storage,
    compilerFor('storage', STORAGE_PARAMS),
    async () =>
      (await importModule(import.meta.url, './storage/storage.js', () => import('./storage/storage.js')))
        .storageService,
  ),
  syslog: lazyService(
    SERVICES.syslog,
    compilerFor('syslog', SYSLOG_PARAMS),
    async () =>
      (await importModule(import.meta.url, './syslog/syslog.js', () => import('./syslog/syslog.js'))).syslogService,
  ),
  flow: lazyService(
    SERVICES.flow,
    compilerFor('flow', FLOW_PARAMS),
    async () => (await importModule(import.meta.url, './flow/flow.js', () => import('./flow/flow.js'))).flowService,
  ),
};
