/**
 * The diagnostic echo service: answers Code 200 (or ReplyCode) with the Data it received. With
 * RecordFile every received message is appended as one JSON line and fsynced before the answer, so
 * tests can prove what was delivered; Delay holds the answer back. The control `echo_crash: ['true']`
 * makes the worker actor throw, to exercise supervision on purpose.
 */
import type { ECHO_PARAMS } from '../../config/echo.js';
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import { SUCCESS_MESSAGE, isSuccessCode } from '../../protocol/codes.js';
import { resultFromError } from '../../protocol/message.js';
import type { DeliveryMsg, RunningService, ServiceContext, ServiceDefinition } from '../../supervisors/service.js';
import { InFlight, serveChannel } from '../../supervisors/service.js';
import { RecordFile } from './record-file.js';

type EchoConfig = ConfigOf<typeof ECHO_PARAMS>;

/** Thrown on purpose by the `echo_crash` control. */
export class CrashRequestedError extends Error {
  override readonly name = 'CrashRequestedError';
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function start(ctx: ServiceContext<EchoConfig>): Promise<RunningService> {
  const { config } = ctx;
  const record = config.RecordFile ? new RecordFile(config.RecordFile) : undefined;
  await record?.open();
  const inFlight = new InFlight();
  let handled = 0;

  const answer = async (msg: DeliveryMsg): Promise<void> => {
    const { delivery } = msg;
    try {
      if (record) await record.append(JSON.stringify({ time: new Date().toISOString(), mode: delivery.mode, channel: delivery.channel, message: delivery.message }));
      if (config.Delay > 0) await sleep(config.Delay);
      const code = config.ReplyCode;
      delivery.respond({ Code: code, Message: isSuccessCode(code) ? SUCCESS_MESSAGE : `echo answers ${code} as configured`, Data: delivery.message.Data, List: [] });
    } catch (e) {
      ctx.log.error(`echo could not record a message: ${(e as Error).message}`);
      delivery.respond(resultFromError(e));
    } finally {
      inFlight.end();
    }
  };

  const worker = ctx.runtime.spawn<undefined, DeliveryMsg>(ctx.supervisor, {
    name: 'worker',
    init: () => undefined,
    receive: (state, msg) => {
      const { delivery } = msg;
      if (delivery.message.Control.echo_crash?.[0] === 'true') throw new CrashRequestedError('crash requested by the echo_crash control');
      delivery.ack();
      handled++;
      inFlight.begin();
      void answer(msg);
      return state;
    },
  });
  const subscription = await serveChannel(ctx, worker);
  ctx.log.info(`echo listening on channel '${ctx.inputChannel}'${record ? `, recording to ${config.RecordFile}` : ''}`);

  return {
    async drain(deadlineMs) {
      subscription.close();
      await inFlight.idle(deadlineMs);
      await record?.close();
    },
    status: () => ({ channel: ctx.inputChannel, handled, inFlight: inFlight.size, replyCode: config.ReplyCode }),
  };
}

export const echoService: ServiceDefinition<typeof ECHO_PARAMS> = { info: SERVICES.echo, start };
