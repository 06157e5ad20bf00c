/**
 * Debian's Chromium driven by playwright-core, for the web app's tests and its rendering benchmark.
 * Each session gets a fresh profile (its own Chromium, or a new context of one the caller launched once:
 * a context shares no storage, cookies or cache with another, and costs a tab instead of a browser start);
 * every console error and page error is collected so a test can require that there were none.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CADRE_CHROMIUM ?? '/usr/bin/chromium';

/** Whether the browser tests can run here (CI installs Chromium; a developer may not have it). */
export const hasChromium = existsSync(CHROMIUM_PATH);

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors seen so far. */
  errors: string[];
  close(): Promise<void>;
}

const LAUNCH = {
  executablePath: CHROMIUM_PATH,
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};

/** One Chromium for many sessions (`openBrowser({ browser })`); the caller closes it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch(LAUNCH);
}

export async function openBrowser(
  options: { width?: number; height?: number; colorScheme?: 'light' | 'dark'; browser?: Browser } = {},
): Promise<BrowserSession> {
  const view = {
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    colorScheme: options.colorScheme ?? 'light',
  } as const;
  const profile = options.browser ? undefined : mkdtempSync(join(tmpdir(), 'cadre-chromium-'));
  const context = profile
    ? await chromium.launchPersistentContext(profile, { ...LAUNCH, ...view })
    : await options.browser!.newContext(view);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  const watch = (watched: Page) => {
    watched.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    watched.on('pageerror', (error) => errors.push(String(error)));
  };
  watch(page);
  context.on('page', watch);
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
    },
  };
}
