/**
 * Opening the listeners a node starts (gateway, syslog receiver, dashboard, interceptor server). A
 * port in use, a port the process may not bind or an address that is not this host's is the user's
 * configuration, not a bug: it becomes a ListenError naming the service, the parameter, its value
 * and the way out, which the command line prints as one line with exit code 2 (no stack trace).
 */
import type { Socket } from 'node:dgram';
import type { Server } from 'node:net';
import type { ListenTarget } from '../../protocol/errors.js';
import { ListenError, describeError } from '../../protocol/errors.js';

/** Where a listener opens: the value of its Port and IP parameters (every listener names them so). */
export interface ListenAt {
  service: string;
  instance?: string;
  port: number;
  /** Undefined: every interface (IP then cannot be at fault). */
  host?: string;
  /** Named in the message where a service opens the same port over both (syslog). */
  protocol?: 'TCP' | 'UDP';
  /** The port's parameter when it is not Port (the syslog receiver's RELPPort). */
  parameter?: string;
}

/** Errors that mean the address, not the port, is wrong. */
const BAD_ADDRESS = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EINVAL']);
const PRIVILEGED_BELOW = 1024;

/** The ListenError a failed listen or bind at `at` stands for. */
export function listenFailure(error: unknown, at: ListenAt): ListenError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const port: ListenTarget = {
    service: at.service,
    ...(at.instance === undefined ? {} : { instance: at.instance }),
    parameter: at.parameter ?? 'Port',
    value: at.port,
  };
  const over = at.protocol ? ` over ${at.protocol}` : '';
  const cause = { cause: error };
  if (code === 'EADDRINUSE')
    return new ListenError(
      port,
      `is already in use${over} (EADDRINUSE)`,
      `choose a free ${at.parameter ?? 'Port'} or stop the program that holds it`,
      cause,
    );
  if (code === 'EACCES' && at.port > 0 && at.port < PRIVILEGED_BELOW) {
    return new ListenError(
      port,
      `needs privileges${over}: ports below ${PRIVILEGED_BELOW} are reserved to root (EACCES)`,
      `choose a ${at.parameter ?? 'Port'} from ${PRIVILEGED_BELOW} up`,
      cause,
    );
  }
  if (BAD_ADDRESS.has(code) && at.host !== undefined) {
    const address: ListenTarget = { ...port, parameter: 'IP', value: at.host };
    return new ListenError(
      address,
      `is not an address of this host (${code})`,
      `give one of its IP addresses, 127.0.0.1 (this host only) or 0.0.0.0 (every interface)`,
      cause,
    );
  }
  return new ListenError(
    port,
    `cannot be opened${over}: ${describeError(error)}`,
    `check Port${at.host === undefined ? '' : ' and IP'}`,
    cause,
  );
}

/** Listens with a TCP (or HTTP) server; rejects with a ListenError. */
export function listenOn(server: Server, at: ListenAt): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const fail = (e: unknown): void => reject(listenFailure(e, at));
    server.once('error', fail);
    const done = (): void => {
      server.off('error', fail);
      resolve();
    };
    // listen() throws at once for a port out of range: the same one-line error, not a stack
    try {
      if (at.host === undefined) server.listen(at.port, done);
      else server.listen(at.port, at.host, done);
    } catch (e) {
      fail(e);
    }
  });
}

/** Binds a UDP socket; rejects with a ListenError. */
export function bindOn(socket: Socket, at: ListenAt): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const fail = (e: unknown): void => reject(listenFailure(e, at));
    socket.once('error', fail);
    try {
      socket.bind(at.port, at.host, () => {
        socket.off('error', fail);
        resolve();
      });
    } catch (e) {
      fail(e);
    }
  });
}
