import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { contentText, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { captureStream } from '../helpers/capture.ts';
import { tempHome } from '../helpers/cli.ts';

let servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

const isMain = (request: RecordedRequest) => request.system.includes('## When to delegate');
const toolMessages = (request: RecordedRequest) =>
  request.body.messages.filter((message) => message.role === 'tool').map((m) => contentText(m.content));

/** Main edits app.ts in the workspace, then reports what the tool said. */
async function setup(config?: object, projectConfig?: object) {
  const server = await startOpenAIServer((request) => {
    if (!isMain(request)) return { status: 400 };
    const results = toolMessages(request);
    if (!results.length) {
      return {
        toolCalls: [
          { name: 'edit_file', arguments: { path: 'app.ts', old: 'port = 80', new: 'port = 8080' } },
        ],
      };
    }
    return { text: `tool said: ${results[0]}` };
  });
  servers.push(server);
  const home = tempHome();
  if (config) writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  const workspace = mkdtempSync(join(tmpdir(), 'cadre-approvals-ws-'));
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'app.ts'), 'export const port = 80;\n');
  if (projectConfig) {
    mkdirSync(join(workspace, '.cadre'));
    writeFileSync(join(workspace, '.cadre', 'config.json'), JSON.stringify(projectConfig));
  }
  const env = {
    CADRE_HOME: home,
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
  };
  const run = async (extra: string[], stdin?: NodeJS.ReadableStream & { isTTY?: boolean }) => {
    const stdout = captureStream();
    const stderr = captureStream();
    const code = await main(['ask', '--json', '--workspace', workspace, ...extra, 'Use port 8080'], {
      env,
      cwd: workspace,
      stdout: stdout.stream,
      stderr: stderr.stream,
      ...(stdin ? { stdin } : {}),
    });
    return { code, json: JSON.parse(stdout.text() || '{}'), stderr: stderr.text() };
  };
  const file = () => readFileSync(join(workspace, 'app.ts'), 'utf8');
  return { run, file };
}

describe('edit_file asks before it acts (cadre ask)', () => {
  it('without a terminal or a flag the edit is denied, and the model is told why', async () => {
    const { run, file } = await setup();
    const result = await run([], Object.assign(new PassThrough(), { isTTY: false }));
    expect(file()).toBe('export const port = 80;\n');
    expect(result.json.answer).toContain('nobody could be asked');
    expect(result.json.answer).toContain('--approve-all');
    expect(result.json.run.toolCalls[0]).toMatchObject({ name: 'edit_file', ok: false });
  });

  it('--approve-all lets it through and the run tree carries the diff', async () => {
    const { run, file } = await setup();
    const result = await run(['--approve-all']);
    expect(result.code).toBe(0);
    expect(file()).toBe('export const port = 8080;\n');
    expect(result.json.run.toolCalls[0].diff).toContain('+export const port = 8080;');
  });

  it('--deny-all refuses it', async () => {
    const { run, file } = await setup();
    const result = await run(['--deny-all']);
    expect(file()).toBe('export const port = 80;\n');
    expect(result.json.answer).toContain('denied by --deny-all');
  });

  it('on a terminal the person is asked and their answer decides', async () => {
    for (const [answer, expected] of [
      ['y\n', 'export const port = 8080;\n'],
      ['n keep port 80\n', 'export const port = 80;\n'],
    ] as const) {
      const { run, file } = await setup();
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      stdin.write(answer);
      const result = await run([], stdin);
      expect(result.stderr).toContain('main wants to call edit_file: app.ts');
      expect(file()).toBe(expected);
      if (answer.startsWith('n')) expect(result.json.answer).toContain('keep port 80');
    }
  });

  it('a config allow rule lets it through without asking; a project config cannot allow', async () => {
    const allowed = await setup({ approvals: { allow: ['edit_file(app.ts)'] } });
    await allowed.run([], Object.assign(new PassThrough(), { isTTY: false }));
    expect(allowed.file()).toBe('export const port = 8080;\n');
    const project = await setup(undefined, { approvals: { allow: ['edit_file', 'bash'] } });
    const result = await project.run([], Object.assign(new PassThrough(), { isTTY: false }));
    expect(project.file()).toBe('export const port = 80;\n');
    expect(result.stderr).toContain('approvals.allow ignored');
  });
});
