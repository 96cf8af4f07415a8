import { expect } from 'chai';
import { Code, isRetryableCode } from '../../../protocol/codes.js';
import {
  BadInputError,
  ForbiddenError,
  HiveError,
  NotFoundError,
  OverloadedError,
  ServiceFailureError,
  StorageFullError,
  TimeoutError,
  TooLargeError,
  UnauthorizedError,
  UnavailableError,
  UpstreamError,
} from '../../../protocol/errors.js';
import { TemplateError, TemplatePhase } from '../../../template/errors.js';

describe('retry classification (protocol/codes.ts isRetryableCode, HiveError.retryable)', () => {
  it('timeouts, overload, unavailability and service or upstream failures are worth retrying', () => {
    for (const code of [408, 425, 429, 500, 502, 503, 504, 507])
      expect(isRetryableCode(code), String(code)).to.equal(true);
  });

  it("the caller's faults and permanent server conditions are final", () => {
    for (const code of [400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 501, 505, 508, 511])
      expect(isRetryableCode(code), String(code)).to.equal(false);
  });

  it('successes, redirects and codes outside HTTP are not failures worth retrying', () => {
    for (const code of [200, 204, 301, 0, -1, 99, 600, 503.5, Number.NaN])
      expect(isRetryableCode(code), String(code)).to.equal(false);
  });

  it("every typed error's retryable follows its code, so a Result's Code and the error it came from agree", () => {
    const errors: HiveError[] = [
      new HiveError('x'),
      new BadInputError('x'),
      new UnauthorizedError('x'),
      new ForbiddenError('x'),
      new NotFoundError('x'),
      new TooLargeError('x'),
      new OverloadedError('x'),
      new ServiceFailureError('x'),
      new UpstreamError('x'),
      new UnavailableError('x'),
      new TimeoutError('x'),
      new StorageFullError('x'),
      new TemplateError('x', TemplatePhase.Parse),
    ];
    for (const e of errors) expect(e.retryable, e.name).to.equal(isRetryableCode(e.code));
  });

  it('a crashed service (500) is retryable, a bad input (400) is not', () => {
    expect(new ServiceFailureError('crashed').retryable).to.equal(true);
    expect(new HiveError('untyped').retryable).to.equal(true);
    expect(new BadInputError('bad').retryable).to.equal(false);
    expect(new UnavailableError('later').code).to.equal(Code.Unavailable);
  });
});
