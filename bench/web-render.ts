/**
 * Web app rendering benchmark: a tree of 50 sub-agent runs × 200 events each streamed into the built page
 * in real Chromium, once paced (the stream arrives over about a second, as a live tree does) and once as
 * a single burst. It reports how long the page took to show everything, the longest main-thread task,
 * the slowest frames while streaming, and how fast the page answers a click afterwards (expanding a run,
 * opening the timeline). Run alone with `npx node bench/web-render.ts` (needs web/dist and Chromium).
 */
import { hasChromium, openBrowser } from '../test/web/browser.ts';
import { startMockApp } from '../test/web/mock-app.ts';
import { wideTree } from '../test/web/ui-stream.ts';

export interface RenderFigures {
  mode: string;
  runs: number;
  eventsPerRun: number;
  /** From pressing Enter to every run shown done and the answer's text shown. */
  allShownMs: number;
  longestTaskMs: number;
  p95FrameMs: number;
  worstFrameMs: number;
  expandMs: number;
  timelineMs: number;
}

async function measure(mode: 'paced' | 'burst', runs: number, eventsPerRun: number): Promise<RenderFigures> {
  const app = await startMockApp({
    chat: () => wideTree(runs, eventsPerRun).stream,
    ...(mode === 'paced' ? { chunksPerWrite: 100, pauseMs: 10 } : {}),
  });
  const browser = await openBrowser();
  try {
    const { page } = browser;
    await page.goto(app.url);
    await page.evaluate(() => {
      const state = { longest: 0, frames: [] as number[], last: 0, running: true };
      (window as unknown as { __bench: typeof state }).__bench = state;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) state.longest = Math.max(state.longest, entry.duration);
      }).observe({ type: 'longtask', buffered: false });
      const frame = (now: number) => {
        if (state.last) state.frames.push(now - state.last);
        state.last = now;
        if (state.running) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Survey everything');
    const started = Date.now();
    await box.press('Enter');
    await page.getByText('All parts are done.').waitFor({ timeout: 60_000 });
    await page.waitForFunction(
      (count) => document.querySelectorAll('[role="img"][aria-label="done"]').length >= count,
      runs,
      { timeout: 60_000 },
    );
    const allShownMs = Date.now() - started;
    const frames = await page.evaluate(() => {
      const state = (
        window as unknown as { __bench: { longest: number; frames: number[]; running: boolean } }
      ).__bench;
      state.running = false;
      return { longest: state.longest, frames: state.frames };
    });
    const sorted = [...frames.frames].sort((a, b) => a - b);
    const p95FrameMs = sorted[Math.floor(sorted.length * 0.95)] ?? 0;

    const clickStarted = Date.now();
    await page.getByRole('button', { name: /Part 25:/ }).click();
    await page.getByText('Tool calls').first().waitFor();
    const expandMs = Date.now() - clickStarted;

    const timelineStarted = Date.now();
    await page.getByRole('button', { name: 'Inspect runs' }).click();
    await page.getByRole('dialog', { name: 'Run timeline' }).waitFor();
    await page.waitForFunction(
      (count) => document.querySelectorAll('.timeline-row').length >= count,
      runs + 1,
    );
    const timelineMs = Date.now() - timelineStarted;
    if (browser.errors.length) throw new Error(`console errors: ${browser.errors.join('; ')}`);
    return {
      mode,
      runs,
      eventsPerRun,
      allShownMs,
      longestTaskMs: Math.round(frames.longest),
      p95FrameMs: Math.round(p95FrameMs),
      worstFrameMs: Math.round(sorted.at(-1) ?? 0),
      expandMs,
      timelineMs,
    };
  } finally {
    await browser.close();
    await app.close();
  }
}

/**
 * Eight siblings streaming at once: samples every run header's place in the conversation each frame and
 * counts how often one that was already shown moved (it should never: collapsed runs are one fixed line).
 */
async function measureSiblings(): Promise<{ frames: number; moves: number; layoutShift: number }> {
  const app = await startMockApp({ chat: () => wideTree(8, 200).stream, chunksPerWrite: 8, pauseMs: 8 });
  const browser = await openBrowser();
  try {
    const { page } = browser;
    if (process.env.BENCH_DEBUG) page.on('console', (message) => console.log(message.text()));
    await page.goto(app.url);
    await page.evaluate(() => {
      const state = { frames: 0, moves: 0, shift: 0, running: true, tops: new Map<Element, number>() };
      (window as unknown as { __siblings: typeof state }).__siblings = state;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) state.shift += (entry as unknown as { value: number }).value;
      }).observe({ type: 'layout-shift', buffered: false });
      const frame = () => {
        const container = document.querySelector('.messages');
        if (container) {
          const origin = container.getBoundingClientRect().top - container.scrollTop;
          for (const header of document.querySelectorAll('.run-header')) {
            const top = header.getBoundingClientRect().top - origin;
            const before = state.tops.get(header);
            if (before !== undefined && Math.abs(before - top) > 0.5) {
              state.moves++;
              console.log(`moved: ${header.textContent?.slice(0, 40)} ${before} -> ${top}`);
            }
            state.tops.set(header, top);
          }
          state.frames++;
        }
        if (state.running) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Eight at once');
    await box.press('Enter');
    await page.getByText('All parts are done.').waitFor({ timeout: 60_000 });
    const result = await page.evaluate(() => {
      const state = (
        window as unknown as {
          __siblings: { frames: number; moves: number; shift: number; running: boolean };
        }
      ).__siblings;
      state.running = false;
      return { frames: state.frames, moves: state.moves, layoutShift: state.shift };
    });
    if (browser.errors.length) throw new Error(`console errors: ${browser.errors.join('; ')}`);
    return result;
  } finally {
    await browser.close();
    await app.close();
  }
}

export async function runWebRenderBench(): Promise<RenderFigures[]> {
  if (!hasChromium) {
    console.log('Web rendering: skipped (no Chromium at /usr/bin/chromium)');
    return [];
  }
  const figures = [await measure('paced', 50, 200), await measure('burst', 50, 200)];
  console.log('Web rendering: 50 runs × 200 events streamed into the built page (Chromium, headless)');
  for (const figure of figures)
    console.log(
      `  ${figure.mode.padEnd(5)}  all shown ${figure.allShownMs} ms · longest task ${figure.longestTaskMs} ms · frames p95 ${figure.p95FrameMs} ms, worst ${figure.worstFrameMs} ms · expand a run ${figure.expandMs} ms · open timeline ${figure.timelineMs} ms`,
    );
  const siblings = await measureSiblings();
  console.log(
    `  8 siblings streaming: ${siblings.frames} frames sampled, ${siblings.moves} moves of a shown run header, layout shift ${siblings.layoutShift.toFixed(3)}`,
  );
  return figures;
}

if (import.meta.main) await runWebRenderBench();
