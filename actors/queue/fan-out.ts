/**
 * Template fan-out (README, The queue): one request renders the queue template's define block, and every
 * `addEntry` in it becomes an entry. The template is parsed once, on first use.
 */
import type { Message } from '../../protocol/message.js';
import { QueueTemplate } from '../../template/dialects/queue.js';
import type { BudgetOptions } from '../../template/budget.js';

export class FanOutTemplate {
  private readonly template: QueueTemplate;

  /** Parses the template; throws a TemplateError (Code 400) naming the problem. */
  constructor(source: string, name: string, budget: BudgetOptions = {}) {
    this.template = new QueueTemplate(source, { name, ...budget });
  }

  /** The entries the define block creates for a request, and the text it printed; a render over its budget throws RenderBudgetError (Code 413). */
  render(define: string, request: Message): { entries: Message[]; output: string } {
    return this.template.render(define, request);
  }
}
