/**
 * The escape suite: each case is something model-written code might do to reach the host or exhaust it,
 * and each is followed by a normal run that must still work. A canary variable is set on the host; no
 * output may ever contain it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSandboxed, type SandboxResult } from './sandbox.ts';

const CANARY = `canary-${Math.random().toString(36).slice(2)}`;
const received: unknown[] = [];
const limits = { timeMs: 600 };

function run(code: string, extra: Partial<Parameters<typeof runSandboxed>[0]> = {}): Promise<SandboxResult> {
  return runSandboxed({
    code,
    toolNames: ['echo'],
    callTool: async (_name, input) => {
      received.push(input);
      return { echoed: input };
    },
    limits,
    ...extra,
  });
}

function expectNoCanary(result: SandboxResult) {
  expect(JSON.stringify(result)).not.toContain(CANARY);
}

/** The run after every escape attempt: plain code and a tool call must still work. */
async function expectHealthy() {
  const result = await run('const r = await echo({n: 2}); return [1, 2, 3].map((x) => x * r.echoed.n)');
  expect(result).toMatchObject({ ok: true, value: [2, 4, 6] });
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(process.env.CADRE_SANDBOX_CANARY).toBe(CANARY);
}

beforeAll(() => {
  process.env.CADRE_SANDBOX_CANARY = CANARY;
});
afterAll(() => {
  delete process.env.CADRE_SANDBOX_CANARY;
});

describe('run_js escape suite', () => {
  it('constructor.constructor reaches only the guest realm, never process', async () => {
    const result = await run(`
      const F = this.constructor.constructor;
      const g = F('return this')();
      let proc;
      try { proc = F('return process')(); } catch (e) { proc = String(e); }
      return { proc, globals: Object.getOwnPropertyNames(g).filter((k) => /^(process|require|module|Buffer|fetch|global)$/.test(k)) };`);
    expect(result.ok).toBe(true);
    if (result.ok)
      expect(result.value).toEqual({ proc: "ReferenceError: 'process' is not defined", globals: [] });
    expectNoCanary(result);
    await expectHealthy();
  });

  it('Error.prepareStackTrace tricks find no host frames', async () => {
    const result = await run(`
      Error.prepareStackTrace = (error, frames) => frames;
      const frames = new Error('x').stack;
      const found = [];
      if (Array.isArray(frames)) for (const f of frames) {
        try { found.push(typeof f.getThis === 'function' ? f.getThis()?.constructor?.constructor('return typeof process')() : 'no getThis'); } catch (e) { found.push(String(e)); }
      }
      Error.captureStackTrace?.({});
      return { kind: typeof frames, found, process: typeof process };`);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(JSON.stringify(result.value)).not.toMatch(/"object"|"function"/);
      expect((result.value as { process: string }).process).toBe('undefined');
    }
    expectNoCanary(result);
    await expectHealthy();
  });

  it('while(true){} is interrupted at the time limit', async () => {
    const result = await run('while (true) {}');
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/time limit.*interrupted/) });
    await expectHealthy();
  });

  it('the host watchdog terminates a worker whose guest is never interrupted', async () => {
    const result = await run('while (true) {}', { guestInterrupt: false, limits: { timeMs: 200 } });
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/worker was terminated/) });
    await expectHealthy();
  });

  it('a huge string allocation loop hits the memory limit', async () => {
    const result = await run("let s = 'x'; const keep = []; while (true) { s = s + s; keep.push(s); }");
    expect(result).toMatchObject({
      ok: false,
      error: expect.stringMatching(/out of memory|string too long/),
    });
    const arrays = await run('const keep = []; for (let i = 0; ; i++) keep.push(new Array(1e5).fill(i));', {
      limits: { timeMs: 5_000 },
    });
    expect(arrays).toMatchObject({ ok: false, error: expect.stringMatching(/out of memory/) });
    await expectHealthy();
  });

  it('unbounded recursion overflows the guest stack, not the host', async () => {
    const result = await run('function f(n) { return f(n + 1) + 1; } return f(0);');
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/stack overflow|call stack/i) });
    await expectHealthy();
  });

  it('a microtask flood is interrupted, a never-settling promise is reported at once', async () => {
    const flood = await run('function f() { Promise.resolve().then(f); } f(); await new Promise(() => {});');
    expect(flood).toMatchObject({ ok: false, error: expect.stringMatching(/time limit/) });
    const never = await run('await new Promise(() => {});');
    // Reported as never settling (not as a time limit): nothing waited for the clock.
    expect(never).toMatchObject({ ok: false, error: expect.stringMatching(/never settles/) });
    await expectHealthy();
  });

  it('a timer flood is refused past a small cap', async () => {
    const result = await run('for (let i = 0; i < 1e6; i++) setTimeout(() => {}, 0); return "done";');
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/too many timers/) });
    const chained = await run(
      'let n = 0; await new Promise((resolve) => { const tick = () => { n++; if (n < 3) setTimeout(tick, 1); else resolve(); }; setTimeout(tick, 1); }); return n;',
    );
    expect(chained).toMatchObject({ ok: true, value: 3 });
    await expectHealthy();
  });

  it('prototype pollution stays in the guest and never reaches tool inputs or the next run', async () => {
    received.length = 0;
    const result = await run(`
      Object.prototype.polluted = 'yes';
      const input = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "n": 1}');
      return await echo(input);`);
    expect(result.ok).toBe(true);
    const input = received[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    const next = await run('return ({}).polluted ?? null');
    expect(next).toMatchObject({ ok: true, value: null });
    await expectHealthy();
  });

  it('a 50 MB return value is refused and a console flood is capped', async () => {
    const big = await run("return 'x'.repeat(50 * 1024 * 1024);", { limits: { timeMs: 5_000 } });
    expect(big).toMatchObject({ ok: false, error: expect.stringMatching(/out of memory/) });
    const overCap = await run("return 'x'.repeat(2 * 1024 * 1024);", { limits: { timeMs: 5_000 } });
    expect(overCap).toMatchObject({ ok: false, error: expect.stringMatching(/the limit is 1000000/) });
    const flood = await run(
      "for (let i = 0; i < 20000; i++) console.log('line ' + i + ' ' + 'z'.repeat(100)); return 1;",
      { limits: { timeMs: 5_000 } },
    );
    expect(flood.ok).toBe(true);
    expect(flood.console.length).toBeLessThanOrEqual(8_000);
    expect(flood.droppedConsoleChars).toBeGreaterThan(1_000_000);
    await expectHealthy();
  });

  it('values nested deeper than the host can serialise are refused where they cross', async () => {
    const deep = "JSON.parse('['.repeat(6000) + ']'.repeat(6000))";
    // Parsing 6,000 levels inside QuickJS takes a few hundred ms on a loaded host: give it time, so the
    // depth check (not the time limit) is what answers.
    const returned = await run(`return ${deep}`, { limits: { timeMs: 10_000 } });
    expect(returned).toMatchObject({ ok: false, error: expect.stringMatching(/nests 6000 levels deep/) });
    // Host code (events, the store, model messages) serialises what comes out with recursive JSON.stringify.
    expect(() => JSON.stringify(returned)).not.toThrow();
    received.length = 0;
    const input = await run(
      `try { await echo({ v: ${deep} }); return 'sent'; } catch (e) { return e.message; }`,
      { limits: { timeMs: 10_000 } },
    );
    expect(input).toMatchObject({ ok: true, value: expect.stringMatching(/nests 6001 levels deep/) });
    expect(received).toEqual([]);
    const fine = await run(
      `const v = JSON.parse('['.repeat(50) + '1' + ']'.repeat(50)); return (await echo({ v })).echoed.v`,
    );
    expect(fine.ok).toBe(true);
    await expectHealthy();
  });

  it('an oversized tool-call input is refused before any tool sees it', async () => {
    received.length = 0;
    const result = await run(
      "try { await echo({ s: 'x'.repeat(5 * 1024 * 1024) }); return 'sent'; } catch (e) { return e.message; }",
      { limits: { timeMs: 5_000 } },
    );
    expect(result).toMatchObject({
      ok: true,
      value: expect.stringMatching(/input is \d+ characters of JSON/),
    });
    expect(received).toEqual([]);
    await expectHealthy();
  });

  it('fetch, import, require, child_process and process.env do not exist', async () => {
    const attempts = [
      'return typeof fetch + typeof XMLHttpRequest + typeof WebSocket + typeof require + typeof process + typeof Deno + typeof Bun',
      "const fs = await import('node:fs'); return fs.readFileSync('/etc/passwd', 'utf8');",
      "return require('child_process').execSync('env').toString();",
      'return process.env.CADRE_SANDBOX_CANARY;',
      'return globalThis.__cadre ?? (typeof std) + (typeof os);',
    ];
    const results = [];
    for (const code of attempts) results.push(await run(code));
    expect(results[0]).toMatchObject({
      ok: true,
      value: 'undefinedundefinedundefinedundefinedundefinedundefinedundefined',
    });
    for (const result of results.slice(1, 4)) expect(result.ok).toBe(false);
    expect(results[4]).toMatchObject({ ok: true, value: 'undefinedundefined' });
    for (const result of results) expectNoCanary(result);
    await expectHealthy();
  });

  it('refuses a stack limit above 256 KiB', async () => {
    await expect(run('return 1', { limits: { stackBytes: 1024 * 1024 } })).rejects.toThrow(/256 KiB/);
  });

  it('tools outside the allow-list do not exist inside', async () => {
    const result = await run(
      'return [typeof echo, typeof read_file, typeof tools.read_file, Object.keys(tools)]',
    );
    expect(result).toMatchObject({ ok: true, value: ['function', 'undefined', 'undefined', ['echo']] });
    await expectHealthy();
  });
});
