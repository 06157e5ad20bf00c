/**
 * What the web app's browser tests share: a real `cadre serve` on a temporary home, a local
 * OpenAI-compatible model server playing a script, and Chromium on the served page; everything started is
 * stopped after each test. Also the scripts and steps several tests use.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, expect } from 'vitest';
import { type FixtureScript, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, tempHome } from '../helpers/cli.ts';
import { startServe } from '../helpers/serve.ts';
import { type BrowserSession, launchChromium, openBrowser } from './browser.ts';

export const isMain = (system: string) => system.includes('You are Cadre, an assistant');
export const isMath = (system: string) => system.includes("Cadre's maths sub-agent");
export const toolNames = (request: RecordedRequest) =>
  (request.body.tools ?? []).map((tool) => tool.function.name);

let chromium: Promise<Browser> | undefined;
/**
 * One Chromium for the test file, launched for its first test; each test opens its own context in it (a
 * fresh profile, see browser.ts) instead of starting a browser.
 */
export function sharedChromium(): Promise<Browser> {
  chromium ??= launchChromium();
  return chromium;
}
afterAll(async () => {
  await (await chromium)?.close();
});

/** Cleanups of what the current test started, run (newest first) after it; tests may add their own. */
export const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups.length = 0;
});

export interface SetupOptions {
  width?: number;
  colorScheme?: 'light' | 'dark';
  env?: Record<string, string>;
  config?: object;
  /** The model ids the fixture model server lists at `GET /models`. */
  models?: string[];
  /** Agent definition files to put in the home's `agents/` folder, by file name. */
  agents?: Record<string, string>;
}

/** A model server playing `script`, a `cadre serve` on a fresh home using it, and Chromium on its page. */
export async function setup(script: FixtureScript, options: SetupOptions = {}) {
  const model = await startOpenAIServer(script, options.models ? { models: options.models } : {});
  cleanups.push(() => model.close());
  const home = tempHome();
  if (options.config) writeFileSync(join(home, 'config.json'), JSON.stringify(options.config));
  if (options.agents) {
    mkdirSync(join(home, 'agents'), { recursive: true });
    for (const [file, text] of Object.entries(options.agents))
      writeFileSync(join(home, 'agents', file), text);
  }
  const env = Object.fromEntries(
    Object.entries({
      ...fixtureModelEnv(model, home),
      ...options.env,
    }).filter(([, value]) => value !== ''),
  );
  const server = await startServe(['--port', '0'], env);
  cleanups.push(() => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });
  const browser = await openBrowser({ ...options, browser: await sharedChromium() });
  cleanups.push(() => browser.close());
  await browser.page.goto(server.url);
  return { model, server, browser, page: browser.page, home, env };
}

/** Main delegates to math, which calls `calculate` and answers; `mathDelayMs` keeps it visibly running. */
export function delegation(mathDelayMs = 0): FixtureScript {
  return ({ body, system }) => {
    const last = body.messages.at(-1);
    if (isMain(system)) {
      if (last?.role === 'user')
        return {
          toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23 and show the working.' } }],
        };
      return {
        text: [
          'The product is **391**.',
          '',
          '| factor | factor | product |',
          '|---|---|---|',
          '| 17 | 23 | 391 |',
          '',
          '```ts',
          'const product = 17 * 23; // 391',
          '```',
        ].join('\n'),
      };
    }
    if (isMath(system)) {
      if (last?.role === 'user')
        return {
          toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }],
          delayMs: mathDelayMs,
        };
      return { text: '17 × 23 = 391: 17 × 20 = 340, plus 17 × 3 = 51.', delayMs: mathDelayMs };
    }
    return { status: 400 };
  };
}

/** Types a question into the message box and sends it with Enter. */
export async function ask(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
}

export function expectNoConsoleErrors(browser: BrowserSession) {
  expect(browser.errors).toEqual([]);
}

/** Where `screenshots` saves: CADRE_SCREENSHOTS, else a temporary folder. */
export const SCREENSHOTS = process.env.CADRE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'cadre-ux-'));
mkdirSync(SCREENSHOTS, { recursive: true });

/** The page as it is now, at 1280 and 375 px, light and dark, saved to SCREENSHOTS for a person to look at. */
export async function screenshots(page: Page, name: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: width === 375 ? 760 : 860 });
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}-${colorScheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 860 });
}
