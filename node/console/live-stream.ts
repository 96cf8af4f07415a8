/**
 * GET /api/live/stream: Server-Sent Events for the live page. After every sample the sections of
 * the page (summary, charts, services, actors, journal) are rendered once — however many browsers
 * watch — and sent as one `sections` event: a JSON object of element id → markup, which the page's
 * script puts in place. Nothing is sampled or rendered for a stream nobody holds open.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LiveHistory } from './history.js';
import type { Html } from './html.js';
import { SECURITY_HEADERS } from './http.js';

export class LiveStream {
  private cached: { at: number; text: string } | undefined;

  constructor(
    private readonly history: LiveHistory,
    private readonly render: () => Record<string, Html>,
  ) {}

  private payload(): string {
    const at = this.history.lastSampleAt;
    if (this.cached?.at !== at) {
      const sections = Object.fromEntries(Object.entries(this.render()).map(([id, h]) => [id, h.text]));
      this.cached = { at, text: JSON.stringify(sections) };
    }
    return this.cached.text;
  }

  open(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    const push = (): void => {
      res.write(`event: sections\ndata: ${this.payload()}\n\n`);
    };
    res.write('retry: 3000\n\n');
    push();
    const off = this.history.onSample(push);
    req.on('close', off);
  }
}
