/**
 * What `hivenode check` and a reload compile is what a start accepts (docs/ARCHITECTURE.md,
 * Reloading a node): an interceptor that is not an http(s):// or module:// URL is refused by the
 * compile, naming the parameter and where it is written, not only when the service starts.
 */
import { expect } from 'chai';
import { checkNodeText } from '../../../node/node-file-control.js';

describe('the node compile refuses an interceptor that is not a URL', () => {
  it('InterceptBefore / InterceptAfter of an HTTP client and a gateway: one line each, with where', async () => {
    const { errors } = await checkNodeText(
      `services:
  - {service: httpclient, NAME: client, URL: "http://127.0.0.1:9/x", InterceptBefore: echo}
  - {service: gateway, NAME: gw, Port: 0, InterceptBefore: "http://127.0.0.1:9/i", InterceptAfter: "ftp://127.0.0.1/x"}
  - {service: httpclient, NAME: fine, InterceptAfter: "module://./interceptor.mjs"}
`,
      'n.yaml',
    );
    expect(errors).to.deep.equal([
      "n.yaml services[0]: InterceptBefore 'echo' is not a URL: write an http(s):// or module:// URL",
      "n.yaml services[1]: InterceptAfter 'ftp://127.0.0.1/x' must be an http(s):// or module:// URL",
    ]);
  });
});
