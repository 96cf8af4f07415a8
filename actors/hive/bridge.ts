/**
 * The bridge actor owns the hive transport (docs/ARCHITECTURE.md, The hive): services tell it what
 * to send and it answers through the reply function carried in each message. It never awaits inside
 * its handler, so one slow channel cannot hold up the others. It is the one owner of the transport
 * and the one validation boundary for every message leaving a service; services talking to the
 * transport directly measured a CPU ratio of 0.98 (0.82-1.05, interleaved runs of the hive bench),
 * within noise, so the hop stays.
 */
import type { Message, Result } from '../../protocol/message.js';
import { checkMessageNames, resultFromError } from '../../protocol/message.js';
import type { ActorRef, ParentRef, Runtime } from '../../supervisors/runtime.js';
import type { HiveTransport, Listener, Subscription } from './transport.js';
import { validateChannel } from './transport.js';
import { assertNever } from '../../protocol/never.js';

/** Messages of the bridge actor. */
export type BridgeMsg =
  /** Request-reply to a channel. */
  | { type: 'call'; channel: string; message: Message; timeoutMs: number; reply: (r: Result) => void }
  /** Acknowledged hand-over to a channel. */
  | { type: 'execute'; channel: string; message: Message; timeoutMs: number; reply: (r: Result) => void }
  /** Fire-and-forget; `reply` learns whether it was dropped. */
  | { type: 'emit'; channel: string; message: Message; reply?: (delivered: boolean) => void }
  /** Starts listening on a channel. */
  | { type: 'listen'; channel: string; listener: Listener; reply: (s: Subscription | Error) => void }
  /** Stops a subscription. */
  | { type: 'unlisten'; subscription: Subscription };

export function spawnBridge(runtime: Runtime, parent: ParentRef, transport: HiveTransport): ActorRef<BridgeMsg> {
  return runtime.spawn<HiveTransport, BridgeMsg>(parent, {
    name: 'hive-bridge',
    init: () => transport,
    receive: (t, msg) => {
      switch (msg.type) {
        case 'call':
        case 'execute': {
          try {
            validateChannel(msg.channel);
            // every message leaving a service passes here, whatever the transport: a control
            // character in Class or Operation is refused at this boundary too
            checkMessageNames(msg.message, 'message');
            // the transport answers the caller directly, exactly once
            if (msg.type === 'call') t.call(msg.channel, msg.message, msg.timeoutMs, msg.reply);
            else t.execute(msg.channel, msg.message, msg.timeoutMs, msg.reply);
          } catch (e) {
            msg.reply(resultFromError(e));
          }
          return t;
        }
        case 'emit': {
          let delivered = false;
          try {
            delivered = t.emit(validateChannel(msg.channel), checkMessageNames(msg.message, 'message'));
          } catch {
            delivered = false;
          }
          msg.reply?.(delivered);
          return t;
        }
        case 'listen':
          try {
            msg.reply(t.listen(validateChannel(msg.channel), msg.listener));
          } catch (e) {
            msg.reply(e instanceof Error ? e : new Error(String(e)));
          }
          return t;
        case 'unlisten':
          void msg.subscription.close();
          return t;
        default:
          return assertNever(msg, 'bridge message');
      }
    },
  });
}
