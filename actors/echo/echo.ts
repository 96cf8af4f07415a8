/**
 * The diagnostic echo service: answers Code 200 (or ReplyCode) with the Data it received. With
 * RecordFile every received message is appended as one JSON line and fsynced before the answer, so
 * tests can prove what was delivered; Delay holds the answer back. The control `echo_crash: ['true']`
 * makes the worker actor throw, to exercise supervision on purpose.
 */
import { ECHO_PARAMS } from '../../config/echo.js';
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { SUCCESS_MESSAGE, isSuccessCode } from '../../protocol/codes.js';
import { describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import type { Delivery } from '../hive/transport.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import type { Handler } from '../service/serve.js';
import { handleAsync, serve } from '../service/serve.js';
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

  const reply = async (message: Message, delivery: Delivery): Promise<Result> => {
    if (record) {
      try {
        await record.append(
          JSON.stringify({ time: new Date().toISOString(), mode: delivery.mode, channel: delivery.channel, message }),
        );
      } catch (e) {
        ctx.log.error(`echo could not record a message: ${describeError(e)}`);
        throw e;
      }
    }
    if (config.Delay > 0) await sleep(config.Delay);
    const code = config.ReplyCode;
    return {
      Code: code,
      Message: isSuccessCode(code) ? SUCCESS_MESSAGE : `echo answers ${code} as configured`,
      Data: message.Data,
      List: [],
    };
  };
  const answer = handleAsync(reply);
  // nothing to record and no delay: the answer is given at once, without a promise and its two callbacks per message
  const atOnce = !record && !(config.Delay > 0);
  const code = config.ReplyCode;
  const text = isSuccessCode(code) ? SUCCESS_MESSAGE : `echo answers ${code} as configured`;
  const handle: Handler = (delivery, a) => {
    if (delivery.message.Control.echo_crash?.[0] === 'true')
      throw new CrashRequestedError('crash requested by the echo_crash control');
    if (atOnce) a.result({ Code: code, Message: text, Data: delivery.message.Data, List: [] });
    else answer(delivery, a);
  };

  const running = await serve(ctx, {
    worker: 'worker',
    handle,
    close: () => record?.close(),
    status: () => ({ replyCode: config.ReplyCode }),
  });
  ctx.log.info(`echo listening on channel '${ctx.inputChannel}'${record ? `, recording to ${config.RecordFile}` : ''}`);
  return running;
}

export const echoService = defineService(SERVICES.echo, compilerFor('echo', ECHO_PARAMS), start);
