/**
 * The queue's `breaker` command run (README, The queue, Circuit breakers): `status` of every breaker
 * or the one named, `open` and `close` of a channel's (breaker-request.ts reads the command).
 */
import type { ChannelGate } from '../../config/allowed-channels.js';
import type { Result } from '../../protocol/message.js';
import { success } from '../../protocol/message.js';
import type { BreakerView } from './breaker.js';
import { BreakerState } from './breaker.js';
import type { BreakerCommand } from './breaker-request.js';
import { allowedChannel } from './command-parser.js';
import type { QueueCore, QueueState } from './queue-core.js';
import { statusData } from './responses.js';

/** A breaker never opened: closed, holding nothing. */
function closedView(channel: string): BreakerView {
  return {
    channel,
    state: BreakerState.Closed,
    held: 0,
    reason: '',
    opened: '',
    until: '',
    probes: 0,
    opens: 0,
    failingSince: '',
  };
}

/** The answer: one value per breaker in each field (channel order), and the breakers in List. */
function breakersResult(core: QueueCore, s: QueueState, views: BreakerView[]): Result {
  const field = (f: (v: BreakerView) => string): string[] => views.map(f);
  const data = statusData(core.view(s), {
    channels: field((v) => v.channel),
    breaker: field((v) => v.state),
    held: field((v) => String(v.held)),
    reason: field((v) => v.reason),
    opened: field((v) => v.opened),
    until: field((v) => v.until),
    opens: field((v) => String(v.opens)),
    failing_since: field((v) => v.failingSince),
  });
  return success(data, views);
}

export function runBreakerCommand(
  core: QueueCore,
  s: QueueState,
  cmd: BreakerCommand,
  gate: ChannelGate,
  respond: (r: Result) => void,
): void {
  const breakers = core.deps.breakers!;
  if (cmd.action === 'status') {
    if (cmd.channel === undefined) return respond(breakersResult(core, s, breakers.views()));
    return respond(breakersResult(core, s, [breakers.view(cmd.channel) ?? closedView(cmd.channel)]));
  }
  // a breaker is made for a channel the queue may deliver to, never for any name a caller sends
  const channel = allowedChannel(gate, cmd.channel ?? core.deps.config.DefaultChannel, 'channel');
  const view = cmd.action === 'open' ? breakers.openByCommand(channel) : breakers.close(channel, core.release(s));
  respond(breakersResult(core, s, [view]));
}
