import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureServer, send, startFixtureServer } from '../../../test/fixtures/apis/fixture-server.ts';
import { HttpClient } from './http-client.ts';
import { BlockedUrlError, ResponseRefusedError } from './http-errors.ts';
import type { ResolvedAddress } from './url-guard.ts';

/**
 * The SSRF suite: every URL a model or page could use to reach something private is refused before a
 * connection is made. The canary listens on loopback; any connection to it fails the suite.
 */
let canary: FixtureServer;
let canary6: FixtureServer | undefined;
let helper: FixtureServer;
let P: number;

const FAKE_DNS: Record<string, ResolvedAddress[]> = {
  'loopback.test': [{ address: '127.0.0.1', family: 4 }],
  'metadata.google.internal': [{ address: '169.254.169.254', family: 4 }],
  'private.test': [{ address: '10.1.2.3', family: 4 }],
  'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'compat.test': [{ address: '::7f00:1', family: 6 }],
  'evilexample.test': [{ address: '127.0.0.1', family: 4 }],
  'example.test.evil.test': [{ address: '127.0.0.1', family: 4 }],
  'sub.example.test': [{ address: '127.0.0.1', family: 4 }],
  'mixed.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
};
const resolve = async (hostname: string) => {
  const found = FAKE_DNS[hostname];
  if (!found) throw new Error(`ENOTFOUND ${hostname}`);
  return found;
};

function client(options: ConstructorParameters<typeof HttpClient>[0] = {}) {
  return new HttpClient({
    guard: { resolve, allowHosts: new Set([`127.0.0.1:${helper.port}`]) },
    retry: { retries: 0 },
    defaultTimeoutMs: 3_000,
    defaultMaxBytes: 1024 * 1024,
    ...options,
  });
}

beforeAll(async () => {
  canary = await startFixtureServer((_request, response) => send(response, 'canary reached', 'text/plain'));
  P = canary.port;
  canary6 = await startFixtureServer((_request, response) => send(response, 'canary reached', 'text/plain'), {
    host: '::1',
    port: P,
  }).catch(() => undefined);
  helper = await startFixtureServer((request, response, url) => {
    if (url.pathname === '/redirect') {
      response.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      return response.end();
    }
    const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
    if (hop) {
      response.writeHead(302, { location: `/hop/${Number(hop[1]) + 1}` });
      return response.end();
    }
    if (url.pathname === '/slow') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('.'), 20);
      request.socket.on('close', () => clearInterval(timer));
      return;
    }
    if (url.pathname === '/big') return send(response, Buffer.alloc(3 * 1024 * 1024, 97), 'text/plain');
    if (url.pathname === '/big-chunked') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 97);
      for (let index = 0; index < 48; index++) response.write(chunk);
      return response.end();
    }
    if (url.pathname === '/redirect-307') {
      response.writeHead(307, { location: url.searchParams.get('to') ?? '/' });
      return response.end();
    }
    if (url.pathname === '/double-bomb') {
      const bomb = gzipSync(gzipSync(Buffer.alloc(64 * 1024 * 1024)));
      return send(response, bomb, 'text/plain', 200, { 'content-encoding': 'gzip, gzip' });
    }
    if (url.pathname === '/bomb') {
      const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024));
      return send(response, bomb, 'text/plain', 200, { 'content-encoding': 'gzip' });
    }
    send(response, 'ok', 'text/plain');
  });
});

afterAll(async () => {
  await Promise.all([canary.close(), canary6?.close(), helper.close()]);
});

afterEach(() => {
  expect(canary.connections).toBe(0);
  expect(canary6?.connections ?? 0).toBe(0);
});

async function expectBlocked(url: string) {
  const error = await client()
    .request({ url, trust: 'guarded' })
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  expect(error, url).toBeInstanceOf(BlockedUrlError);
}

describe('loopback by name and number', () => {
  const cases = () => [
    `http://127.0.0.1:${P}/`,
    `http://localhost:${P}/`,
    `http://LOCALHOST.:${P}/`,
    `http://app.localhost:${P}/`,
    `http://2130706433:${P}/`,
    `http://0x7f.1:${P}/`,
    `http://0x7f000001:${P}/`,
    `http://0177.0.0.1:${P}/`,
    `http://127.1:${P}/`,
    `http://127.0.1:${P}/`,
    `http://[::1]:${P}/`,
    `http://[::ffff:127.0.0.1]:${P}/`,
    `http://[::ffff:7f00:1]:${P}/`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${P}/`,
    `http://[64:ff9b::7f00:1]:${P}/`,
    `http://[2002:7f00:1::]:${P}/`,
    `http://0.0.0.0:${P}/`,
    `http://0:${P}/`,
    `http://[::]:${P}/`,
    `http://127.000.000.001:${P}/`,
    `http://017700000001:${P}/`,
    `http://127。0。0。1:${P}/`,
    `http://ｌｏｃａｌｈｏｓｔ:${P}/`,
    `http://LocalHost:${P}/`,
    `http://[::127.0.0.1]:${P}/`,
    `http://[::7f00:1]:${P}/`,
    `http://[64:ff9b:1::7f00:1]:${P}/`,
    `http://[::ffff:0:7f00:1]:${P}/`,
    `http://[fe80::1%25eth0]:${P}/`,
    `http://[fe80::1%eth0]:${P}/`,
  ];
  it('refuses every spelling of loopback and the unspecified address', async () => {
    for (const url of cases()) await expectBlocked(url);
  });
});

describe('private, link-local, metadata and other special ranges', () => {
  it.each([
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://172.31.255.254/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://[ff02::1]/',
    'http://198.18.0.1/',
    'http://192.0.2.1/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://metadata/computeMetadata/v1/',
    'http://metadata.google.internal./computeMetadata/v1/',
    'http://METADATA.GOOGLE.INTERNAL/computeMetadata/v1/',
    'http://169.254.169.254./latest/meta-data/',
    'http://[::ffff:169.254.169.254]/latest/meta-data/',
    'http://[::169.254.169.254]/latest/meta-data/',
    'http://[fd00:ec2::254]./',
  ])('%s', async (url) => {
    await expectBlocked(url);
  });
});

describe('hostnames that resolve to something private', () => {
  it('refuses a name resolving to loopback', async () => expectBlocked(`http://loopback.test:${P}/`));
  it('refuses a name resolving to a private address', async () => expectBlocked('http://private.test/'));
  it('refuses a name resolving to an IPv4-mapped loopback', async () =>
    expectBlocked(`http://mapped.test:${P}/`));
  it('refuses a name resolving to an IPv4-compatible loopback (::127.0.0.1)', async () =>
    expectBlocked(`http://compat.test:${P}/`));
  it('refuses a name with any private address among its answers', async () =>
    expectBlocked(`http://mixed.test:${P}/`));
});

describe('redirects', () => {
  it.each([
    () => `http://127.0.0.1:${P}/`,
    () => `http://loopback.test:${P}/admin`,
    () => `http://[::1]:${P}/`,
    () => 'http://169.254.169.254/latest/meta-data/',
    () => 'file:///etc/passwd',
    () => 'data:text/plain,hello',
    () => `//127.0.0.1:${P}/`,
    () => `/\\127.0.0.1:${P}/`,
    () => `http://[::127.0.0.1]:${P}/`,
  ])('refuses a redirect to %#', async (target) => {
    const url = `${helper.url}/redirect?to=${encodeURIComponent(target())}`;
    await expectBlocked(url);
  });

  it('checks a redirect away from a trusted endpoint like any guarded URL', async () => {
    for (const to of [`http://127.0.0.1:${P}/`, `//localhost:${P}/`, 'http://169.254.169.254/']) {
      const error = await client()
        .request({ url: `${helper.url}/redirect?to=${encodeURIComponent(to)}`, trust: 'endpoint' })
        .catch((caught: unknown) => caught);
      expect(error, to).toBeInstanceOf(BlockedUrlError);
    }
  });

  it("does not carry the caller's headers (API keys) to another origin", async () => {
    const sink = await startFixtureServer((_request, response) => send(response, 'sink', 'text/plain'));
    try {
      const allowHosts = new Set([`127.0.0.1:${helper.port}`, `localhost:${sink.port}`]);
      const twoHosts = client({
        guard: { resolve: async () => [{ address: '127.0.0.1', family: 4 }], allowHosts },
      });
      for (const path of ['/redirect', '/redirect-307']) {
        const to = encodeURIComponent(`http://localhost:${sink.port}/landing`);
        const response = await twoHosts.request({
          url: `${helper.url}${path}?to=${to}`,
          trust: 'endpoint',
          headers: {
            authorization: 'Bearer sk-secret',
            'x-api-key': 'sk-secret',
            'x-subscription-token': 'sk-secret',
          },
        });
        expect(response.body.toString()).toBe('sink');
      }
      const sent = helper.requests.filter((request) => request.url.startsWith('/redirect'));
      expect(sent.at(-1)?.headers.authorization).toBe('Bearer sk-secret');
      expect(sink.requests).toHaveLength(2);
      for (const request of sink.requests) expect(JSON.stringify(request.headers)).not.toContain('sk-secret');
    } finally {
      await sink.close();
    }
  });

  it('stops an over-long redirect chain after 5 redirects', async () => {
    const before = helper.requests.filter((request) => request.url.startsWith('/hop/')).length;
    const error = await client()
      .request({ url: `${helper.url}/hop/0`, trust: 'guarded' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseRefusedError);
    expect((error as ResponseRefusedError).code).toBe('too_many_redirects');
    const hops = helper.requests.filter((request) => request.url.startsWith('/hop/')).length - before;
    expect(hops).toBe(6);
  });
});

describe('schemes and userinfo', () => {
  it.each([
    'file:///etc/passwd',
    'ftp://127.0.0.1/',
    'gopher://127.0.0.1:70/_GET',
    'data:text/plain,hello',
    'javascript:alert(1)',
    'ws://127.0.0.1/',
    'dict://127.0.0.1:11211/stats',
    'not a url',
    '//127.0.0.1/',
  ])('refuses %s', async (url) => expectBlocked(url));

  it.each([
    () => `http://user:pass@127.0.0.1:${P}/`,
    () => `http://example.com@127.0.0.1:${P}/`,
    () => `http://example.com:80@127.0.0.1:${P}/`,
    () => `http://127.0.0.1:${P}#@example.com/`,
    () => `http://127.0.0.1:${P}\\@example.com/`,
    () => `http://example.com%40127.0.0.1:${P}/`,
  ])('refuses userinfo trick %#', async (url) => expectBlocked(url()));
});

describe('bodies', () => {
  it('cuts off an endless slow body at the time cap', async () => {
    const error = await client()
      .request({ url: `${helper.url}/slow`, trust: 'guarded', timeoutMs: 300 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseRefusedError);
    expect((error as ResponseRefusedError).code).toBe('timeout');
  });

  it('refuses nested content encodings ("gzip, gzip") instead of undoing one layer', async () => {
    const error = await client()
      .request({ url: `${helper.url}/double-bomb`, trust: 'guarded', maxBytes: 1024 * 1024 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseRefusedError);
    expect((error as ResponseRefusedError).code).toBe('content_type');
  });

  it.each(['/big', '/big-chunked', '/bomb'])('refuses an oversized body at %s', async (path) => {
    const error = await client()
      .request({ url: `${helper.url}${path}`, trust: 'guarded', maxBytes: 1024 * 1024 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseRefusedError);
    expect((error as ResponseRefusedError).code).toBe('too_large');
  });
});

describe('allow-list and pinning', () => {
  it('matches CADRE_FETCH_ALLOW entries exactly, never by prefix or suffix', async () => {
    const allowHosts = new Set(['example.test', `example.test:${P}`]);
    for (const host of ['evilexample.test', 'example.test.evil.test', 'sub.example.test']) {
      const error = await client({ guard: { resolve, allowHosts } })
        .request({ url: `http://${host}:${P}/`, trust: 'guarded' })
        .catch((caught: unknown) => caught);
      expect(error, host).toBeInstanceOf(BlockedUrlError);
    }
  });

  it('lets an allow-listed private host through (CADRE_FETCH_ALLOW)', async () => {
    const response = await client().request({ url: `${helper.url}/ok`, trust: 'guarded' });
    expect(response.body.toString()).toBe('ok');
  });

  it('connects to the address it checked, so DNS rebinding cannot move the request', async () => {
    // A "public" server on 127.0.0.2 and the canary on 127.0.0.1, same port. The rebinding resolver
    // answers 127.0.0.2 once, then 127.0.0.1; a second lookup at connect time would hit the canary.
    const target = await startFixtureServer((_request, response) => send(response, 'checked', 'text/plain'), {
      host: '127.0.0.2',
      port: P,
    });
    let lookups = 0;
    const connected: string[] = [];
    const rebinding = new HttpClient({
      guard: {
        resolve: async () => [{ address: lookups++ === 0 ? '127.0.0.2' : '127.0.0.1', family: 4 }],
        isAllowedAddress: (address) => address === '127.0.0.2',
      },
      retry: { retries: 0 },
      onConnect: ({ address }) => connected.push(address),
    });
    try {
      const response = await rebinding.request({ url: `http://rebind.test:${P}/`, trust: 'guarded' });
      expect(response.body.toString()).toBe('checked');
      expect(lookups).toBe(1);
      expect(connected).toEqual(['127.0.0.2']);
      expect(target.connections).toBe(1);
    } finally {
      await target.close();
    }
  });
});
