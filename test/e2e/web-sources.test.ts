/**
 * An answer's sources (issue 33, item 13): the built page in Chromium fed by a stand-in server, an answer
 * whose main agent and sub-agent cite overlapping pages. Under the answer the sources show once, each with
 * its site and title, verified ones first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunPartData } from '../../src/app/answer/protocol.ts';
import { hasChromium, openBrowser } from '../web/browser.ts';
import { startMockApp } from '../web/mock-app.ts';
import { UiStream } from '../web/ui-stream.ts';
import { screenshots } from '../web/web-app-setup.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers.length = 0;
});

function citingAnswer(): UiStream {
  const stream = new UiStream();
  const usage = { inputTokens: 100, outputTokens: 20, totalTokens: 120 };
  const root: RunPartData = {
    runId: 'run-root',
    parentRunId: null,
    rootRunId: 'run-root',
    depth: 0,
    agent: 'main',
    task: 'Who hunts at night?',
    model: 'compatible:fixture',
    status: 'running',
    startedAt: Date.now(),
  };
  const child: RunPartData = {
    ...root,
    runId: 'run-research',
    parentRunId: 'run-root',
    depth: 1,
    agent: 'research',
    task: 'Find who hunts at night.',
    parentToolCallId: 'call-1',
  };
  const owls = { url: 'https://www.example.org/owls', title: 'Owls at night', verified: true };
  const bats = { url: 'https://bats.example.net/', title: 'Bats', verified: false };
  stream.start('answer-1', { sessionId: 's', rootRunId: 'run-root' }).run(root);
  stream.toolCall('call-1', 'research', { task: child.task }).run(child);
  stream.run({
    ...child,
    status: 'ok',
    endedAt: Date.now(),
    summary: 'Owls.',
    usage,
    subtreeUsage: usage,
    sources: [owls],
  });
  stream.toolResult('call-1', { status: 'ok', runId: 'run-research' });
  stream.text('text-1', 'Owls hunt at night, and bats too.');
  stream.run({
    ...root,
    status: 'ok',
    endedAt: Date.now(),
    summary: 'Owls hunt at night, and bats too.',
    usage,
    subtreeUsage: usage,
    sources: [bats, owls],
  });
  stream.finish({ sessionId: 's', rootRunId: 'run-root', status: 'ok', usage });
  return stream;
}

describe.skipIf(!hasChromium)("an answer's sources", () => {
  it('lists each source once under the answer, with its site and title, verified first', async () => {
    const app = await startMockApp({ chat: citingAnswer });
    closers.push(() => app.close());
    const browser = await openBrowser();
    closers.push(() => browser.close());
    const { page } = browser;
    await page.goto(app.url);
    await page.getByRole('textbox', { name: 'Message' }).fill('Who hunts at night?');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const answer = page.getByRole('article', { name: 'Answer' });
    await answer.getByText('Owls hunt at night, and bats too.').waitFor({ timeout: 20_000 });
    const sources = answer.getByRole('list', { name: 'Sources' });
    await sources.waitFor();
    expect(await answer.getByRole('list', { name: 'Sources' }).count()).toBe(1);
    const items = await sources.getByRole('listitem').allTextContents();
    expect(items).toEqual([
      expect.stringMatching(/example\.org\s*Owls at night/),
      expect.stringMatching(/bats\.example\.net\s*Bats\s*not verified/),
    ]);
    await screenshots(page, '33-13-sources');
    expect(browser.errors).toEqual([]);
  }, 60_000);
});
