import { expect } from 'chai';
import { noProxyRules } from '../../../actors/net/no-proxy.js';
import { proxySettings } from '../../../actors/net/proxy.js';
import { ConfigError } from '../../../protocol/errors.js';

const u = (s: string): URL => new URL(s);

describe('NO_PROXY rules (as curl reads them)', () => {
  it('host names match themselves and the names below them, by whole labels, in any case', () => {
    const rules = noProxyRules('example.com, .corp.test  Internal');
    for (const url of [
      'http://example.com/',
      'https://API.example.com/x',
      'http://a.b.corp.test:81/',
      'http://corp.test/',
      'http://internal/',
      'http://example.com./',
    ])
      expect(rules.matches(u(url)), url).to.equal(true);
    for (const url of ['http://ample.com/', 'http://example.com.evil.net/', 'http://notexample.com/', 'http://intern/'])
      expect(rules.matches(u(url)), url).to.equal(false);
  });

  it('* alone sends everything direct; an empty value nothing', () => {
    expect(noProxyRules('*').matches(u('http://anything.test/'))).to.equal(true);
    expect(noProxyRules('a.test, *').matches(u('https://10.1.2.3/'))).to.equal(true);
    expect(noProxyRules('').matches(u('http://localhost/'))).to.equal(false);
  });

  it('host:port applies to that port only, the scheme’s default port included; IPv6 in brackets', () => {
    const rules = noProxyRules('api.test:8080, web.test:443, [::1]:9000, ::2');
    expect(rules.matches(u('http://api.test:8080/'))).to.equal(true);
    expect(rules.matches(u('http://api.test:8081/'))).to.equal(false);
    expect(rules.matches(u('https://web.test/'))).to.equal(true);
    expect(rules.matches(u('http://web.test/'))).to.equal(false);
    expect(rules.matches(u('http://[::1]:9000/'))).to.equal(true);
    expect(rules.matches(u('http://[::1]:9001/'))).to.equal(false);
    expect(rules.matches(u('http://[::2]:1/'))).to.equal(true);
  });

  it('IP addresses match exactly, CIDRs every address inside; an address is never a name suffix', () => {
    const rules = noProxyRules('10.0.0.0/8, 192.168.1.5, 0.0.1');
    expect(rules.matches(u('http://10.200.3.4/'))).to.equal(true);
    expect(rules.matches(u('http://11.0.0.1/'))).to.equal(false);
    expect(rules.matches(u('http://192.168.1.5:99/'))).to.equal(true);
    expect(rules.matches(u('http://192.168.1.50/'))).to.equal(false);
    expect(rules.matches(u('http://172.0.0.1/'))).to.equal(false);
  });

  it('entries it cannot read are listed (for one warning) and ignored', () => {
    const rules = noProxyRules('good.test, bad host!, a.test:port, 10.0.0.0/40, x.test:70000');
    expect(rules.rejected).to.deep.equal(['host!', 'a.test:port', '10.0.0.0/40', 'x.test:70000']);
    expect(rules.matches(u('http://good.test/'))).to.equal(true);
  });
});

describe('proxy settings (Proxy parameter, then the environment)', () => {
  const settings = (param: string, env: Record<string, string>) => {
    const warnings: string[] = [];
    const s = proxySettings(param, env, (line) => warnings.push(line));
    return { s, warnings };
  };

  it('reads http_proxy/HTTP_PROXY for http and https_proxy/HTTPS_PROXY for https, the lower-case form first', () => {
    const { s, warnings } = settings('', {
      HTTP_PROXY: 'http://upper:3128',
      http_proxy: 'http://lower:3128',
      HTTPS_PROXY: 'https://u:p@secure:8443',
    });
    expect(s.proxyFor(u('http://x.test/'))!.shown).to.equal('http://lower:3128');
    expect(s.proxyFor(u('https://x.test/'))).to.deep.include({ shown: 'https://secure:8443', source: 'HTTPS_PROXY' });
    expect(s.summary).to.equal(
      'http through http://lower:3128 (http_proxy), https through https://secure:8443 (HTTPS_PROXY)',
    );
    expect(warnings).to.deep.equal([]);
  });

  it('a variable without a scheme means http:// (as curl reads it); empty variables are unset', () => {
    const { s } = settings('', { HTTP_PROXY: 'proxy.test:3128', HTTPS_PROXY: '', https_proxy: ' ' });
    expect(s.proxyFor(u('http://x.test/'))!.url.href).to.equal('http://proxy.test:3128/');
    expect(s.proxyFor(u('https://x.test/'))).to.equal(undefined);
  });

  it('NO_PROXY sends matching hosts direct', () => {
    const { s } = settings('', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'local.test' });
    expect(s.proxyFor(u('https://a.local.test/'))).to.equal(undefined);
    expect(s.proxyFor(u('https://remote.test/'))!.shown).to.equal('http://p:1');
  });

  it('malformed variables are warned about once, without their credentials, and ignored', () => {
    const { s, warnings } = settings('', {
      HTTP_PROXY: 'socks5://user:secret@p:1080',
      HTTPS_PROXY: 'http://user:secret@p:1/path',
      NO_PROXY: 'ok.test, bad!',
    });
    expect(s.servers).to.deep.equal([]);
    expect(s.proxyFor(u('http://x.test/'))).to.equal(undefined);
    expect(warnings).to.deep.equal([
      "HTTP_PROXY: 'socks5://***@p:1080' is not an http:// or https:// URL; ignored, requests go direct",
      "HTTPS_PROXY: 'http://***@p:1/path' has a path; a proxy is scheme://[user:password@]host[:port]; ignored, requests go direct",
    ]);
    const bare = settings('', { HTTP_PROXY: 'user:se/cr@et@p:port' });
    expect(bare.warnings).to.deep.equal(["HTTP_PROXY: '***@p:port' is not a URL; ignored, requests go direct"]);
    const bad = settings('', { HTTP_PROXY: 'http://p:1', NO_PROXY: 'ok.test, bad!' });
    expect(bad.warnings).to.deep.equal(["NO_PROXY: 'bad!' cannot be read; ignored"]);
  });

  it('the Proxy parameter wins over every variable, NO_PROXY included, for every scheme', () => {
    const { s, warnings } = settings('https://u:p@param.test:8443', { HTTP_PROXY: 'http://env:1', NO_PROXY: '*' });
    for (const url of ['http://x.test/', 'https://y.test/'])
      expect(s.proxyFor(u(url))).to.deep.include({ shown: 'https://param.test:8443', source: 'Proxy' });
    expect(s.summary).to.equal('through proxy https://param.test:8443 (Proxy)');
    expect(warnings).to.deep.equal([]);
  });

  it('a bad Proxy stops the start with one line naming the parameter and not the password', () => {
    for (const [value, reason] of [
      ['socks5://u:secret@p:1080', "'socks5://***@p:1080' is not an http:// or https:// URL"],
      ['proxy.test:3128', "'proxy.test:3128' is not an http:// or https:// URL"],
      ['http://u:secret@[bad', "'http://***@[bad' is not a URL"],
    ] as const) {
      const err = (() => {
        try {
          proxySettings(value, {}, () => {});
        } catch (e) {
          return e;
        }
      })();
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.equal(`Proxy: ${reason}`);
    }
  });
});
