import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { contentText, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { chatBody } from '../helpers/server.ts';
import { storeReader } from '../helpers/store-reader.ts';
import { hasChromium, openBrowser } from '../web/browser.ts';

/**
 * Issue 23, item 12: an approved `bash` outlives a SIGKILLed `cadre serve` (its process group is its own),
 * and the resumed run reaches the same call without a result. It must not run the command a second time
 * while the first still runs, and must tell the person that the command may have run before asking again.
 *
 * The command takes a lock (flock, released only when every process holding it has exited) and writes
 * "overlap" when another run of it still holds the lock; it then waits for the test's `release` file.
 */
const COMMAND =
  'exec 9>>lock; flock -n 9 || echo overlap >> log; echo "start $$" >> log; ' +
  'while [ ! -e release ]; do sleep 0.05; done; echo "end $$" >> log';

function script(request: RecordedRequest) {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return { text: `bash said: ${contentText(last.content).slice(0, 200)}` };
  return { toolCalls: [{ id: 'call_bash_1', name: 'bash', arguments: { command: COMMAND, timeout: 600 } }] };
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(env: Record<string, string>, workspace: string): Promise<ServeProcess> {
  const server = await startServe(['--port', '0', '--workspace', workspace], env);
  cleanups.push(() => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });
  return server;
}

/** The JSON of each `data:` line of a server-sent event stream, as it arrives. */
async function* sseData(response: Response): AsyncGenerator<any> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(bytes, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data && data !== '[DONE]') yield JSON.parse(data);
    }
  }
}

/**
 * Resolves once `check()` holds: looked at whenever something in `folder` changes, and every 100 ms besides
 * (a change between the first look and the watcher's start would otherwise go unseen).
 */
function whenFolder(folder: string, check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(folder, () => look());
    const timer = setInterval(() => look(), 100);
    const look = () => {
      if (!check()) return;
      watcher.close();
      clearInterval(timer);
      resolve();
    };
    look();
  });
}

/** The command's log lines so far (none while the file is only created: the watcher can see that first). */
const logOf = (workspace: string) =>
  existsSync(join(workspace, 'log'))
    ? readFileSync(join(workspace, 'log'), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : [];

/** Running, not a zombie left for init to reap (a killed process's locks are released by then). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

it.runIf(process.platform === 'linux')(
  'SIGKILL of cadre serve during an approved bash: the resume stops the old command, warns that it may have run, and runs it once at a time',
  async () => {
    const model = await startOpenAIServer(script);
    cleanups.push(() => model.close());
    const workspace = mkdtempSync(join(tmpdir(), 'cadre-bash-kill-'));
    // Whatever happens, every run of the command ends with the test (they wait for this file).
    cleanups.push(() => writeFileSync(join(workspace, 'release'), ''));
    const env = fixtureModelEnv(model);
    const first = await serve(env, workspace);
    const chat = await fetch(`${first.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chatBody('bash-session', 'Run the migration.'),
    });
    let rootRunId = '';
    for await (const chunk of sseData(chat)) {
      if (chunk.type !== 'data-run-event' || chunk.data.type !== 'approval-request') continue;
      expect(chunk.data.warning).toBeUndefined();
      rootRunId = chunk.data.rootRunId;
      const answered = await fetch(`${first.url}/api/approvals/${chunk.data.approvalId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ approved: true }),
      });
      expect(answered.status).toBe(200);
      break;
    }
    await whenFolder(workspace, () => logOf(workspace).length > 0);
    const [started] = logOf(workspace);
    const oldPid = Number(started?.split(' ')[1]);
    expect(started).toBe(`start ${oldPid}`);

    first.child.kill('SIGKILL');
    await first.exited;
    // The command outlived the server: its group runs on, with nobody left to stop it.
    expect(running(oldPid)).toBe(true);

    const second = await serve(env, workspace);
    const resumed = await fetch(`${second.url}/api/runs/${rootRunId}/resume`, { method: 'POST' });
    expect(resumed.status).toBe(202);
    const { runId } = (await resumed.json()) as { runId: string };
    const events = await fetch(`${second.url}/api/runs/${runId}/events`);
    let warning = '';
    for await (const event of sseData(events)) {
      if (event.type === 'approval-request') {
        warning = event.warning;
        // The old command is gone before the person is asked: a second run cannot overlap it.
        expect(running(oldPid)).toBe(false);
        expect(logOf(workspace)).toEqual([`start ${oldPid}`]);
        // Every door shows the same warning: the pending list (after a reload) says it too.
        const pending = (await (await fetch(`${second.url}/api/approvals`)).json()) as {
          approvals: Array<{ approvalId: string; warning?: string }>;
        };
        expect(pending.approvals).toEqual([
          expect.objectContaining({ approvalId: event.approvalId, warning }),
        ]);
        if (hasChromium) {
          // The web app's card says it before the person allows it, and the person allows it there.
          const browser = await openBrowser();
          cleanups.push(() => browser.close());
          await browser.page.goto(`${second.url}/s/bash-session`);
          const prompts = browser.page.getByRole('region', { name: 'Waiting for your approval' });
          await prompts.getByText(warning).waitFor({ timeout: 30_000 });
          await prompts.getByRole('button', { name: 'Allow bash for main' }).click();
        } else {
          await fetch(`${second.url}/api/approvals/${event.approvalId}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ approved: true }),
          });
        }
        await whenFolder(workspace, () => logOf(workspace).length >= 2);
        writeFileSync(join(workspace, 'release'), '');
      }
      if (event.type === 'run-finish' && event.depth === 0) break;
    }
    expect(warning).toMatch(/^This call was started before the run was interrupted .* may have run already/);
    expect(warning).toContain(`It was still running as process group ${oldPid}`);
    expect(warning).toContain('Cadre stopped it (SIGKILL) so that it cannot run twice at once');

    const lines = logOf(workspace);
    const newPid = Number(lines[1]?.split(' ')[1]);
    expect(newPid).not.toBe(oldPid);
    expect(lines).toEqual([`start ${oldPid}`, `start ${newPid}`, `end ${newPid}`]);
    const session = (await (await fetch(`${second.url}/api/sessions/bash-session`)).json()) as {
      messages: Array<{ role: string; parts: Array<{ type: string; text?: string }> }>;
    };
    const answer = session.messages.at(-1)?.parts.find((part) => part.type === 'text')?.text;
    expect(answer).toMatch(/^bash said: .*"exitCode":0/);
  },
  // Two or three cadre processes start one after another: on a loaded two-core machine that alone takes
  // most of the tier's 20 s.
  90_000,
);

it.runIf(process.platform === 'linux')(
  'SIGKILL of cadre ask during an approved bash: cadre runs resume --workspace says so at the prompt, and runs it once at a time',
  async () => {
    const model = await startOpenAIServer(script);
    cleanups.push(() => model.close());
    const workspace = mkdtempSync(join(tmpdir(), 'cadre-bash-kill-cli-'));
    cleanups.push(() => writeFileSync(join(workspace, 'release'), ''));
    const home = tempHome();
    const env = fixtureModelEnv(model, home);
    let asking: ChildProcess | undefined;
    const asked = runCli(['ask', '--workspace', workspace, '--approve-all', 'Run the migration.'], env, {
      onSpawn: (child) => {
        asking = child;
      },
    });
    cleanups.push(() => asking?.kill('SIGKILL'));
    await whenFolder(workspace, () => logOf(workspace).length > 0);
    asking!.kill('SIGKILL');
    expect((await asked).signal).toBe('SIGKILL');
    const oldPid = Number(logOf(workspace)[0]?.split(' ')[1]);
    expect(running(oldPid)).toBe(true);
    const store = storeReader(env);
    const [root] = await store.rows<{ id: string }>('SELECT id FROM runs WHERE parent_id IS NULL');
    await store.close();

    const resumed = runCli(['runs', 'resume', root!.id, '--workspace', workspace, '--approve-all'], env);
    await whenFolder(workspace, () => logOf(workspace).length >= 2);
    writeFileSync(join(workspace, 'release'), '');
    const { code, stdout, stderr } = await resumed;
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('⚠ main wants to call bash: $ exec 9>>lock;');
    expect(stderr).toMatch(
      new RegExp(
        `\\n  This call was started before the run was interrupted .* It was still running as process group ${oldPid} .*\\nAllowed by --approve-all\\.\\n`,
      ),
    );
    expect(stdout).toMatch(/^bash said: .*"exitCode":0/);
    const newPid = Number(logOf(workspace)[1]?.split(' ')[1]);
    expect(logOf(workspace)).toEqual([`start ${oldPid}`, `start ${newPid}`, `end ${newPid}`]);
  },
  // Two or three cadre processes start one after another: on a loaded two-core machine that alone takes
  // most of the tier's 20 s.
  90_000,
);
