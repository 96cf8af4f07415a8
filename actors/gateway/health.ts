/**
 * The gateway's health check (README, The REST gateway): 200 only when the gateway can serve, that is the hive is
 * connected, the gateway is not draining, and every service of its node has started. A load
 * balancer polling it therefore sends no traffic while a later service of the node is still
 * starting (it would answer 404: nobody listens on its channel yet).
 */
import { Code } from '../../protocol/codes.js';
import type { ReadinessView } from '../service/readiness.js';

export interface HealthInputs {
  hiveConnected: boolean;
  draining: boolean;
  readiness: ReadinessView;
}

export interface HealthAnswer {
  code: number;
  body: { status: 'ok' | 'starting' | 'unavailable'; hive: 'connected' | 'disconnected'; starting?: string[] };
}

/** The status and body of a health check answer. */
export function healthOf({ hiveConnected, draining, readiness }: HealthInputs): HealthAnswer {
  const hive = hiveConnected ? 'connected' : 'disconnected';
  if (!hiveConnected || draining) return { code: Code.Unavailable, body: { status: 'unavailable', hive } };
  if (!readiness.ready)
    return { code: Code.Unavailable, body: { status: 'starting', hive, starting: readiness.pending() } };
  return { code: Code.Success, body: { status: 'ok', hive } };
}
