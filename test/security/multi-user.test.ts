import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cadre } from '../../src/app/create-cadre.ts';
import { userWorkspaces } from '../../src/app/user-workspaces.ts';
import type { CadreConfig } from '../../src/config/schema.ts';
import { testToolContext, toolCaller } from '../../src/core/test-tool-context.ts';
import { ScriptedModel, type ScriptedReply, type ScriptedRequest } from '../../src/models/scripted-model.ts';
import { codingTools, sandboxRuntime } from '../../src/tools/coding/index.ts';

/**
 * The attacks of issue 23 (items 2 and 3) against a server that strangers share: one user's approved
 * command reading Cadre's database, its approval key, another user's files, the operator's secrets,
 * the network; the server's working folder handed to every user as their workspace.
 */
let base: string;
let operatorFolder: string;
let home: string;
let fixture: Server;
let fixtureUrl: string;
const cadres: Cadre[] = [];
let made = 0;

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), 'cadre-multi-user-'));
  operatorFolder = path.join(base, 'operator');
  home = path.join(base, 'home');
  mkdirSync(path.join(operatorFolder, '.ssh'), { recursive: true });
  writeFileSync(path.join(operatorFolder, '.ssh', 'id_rsa'), 'OPERATOR-PRIVATE-KEY');
  writeFileSync(path.join(operatorFolder, '.env'), 'OPENAI_API_KEY=OPERATOR-ENV-SECRET');
  fixture = createServer((_request, response) => response.end('NETWORK-REACHED'));
  await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
  fixtureUrl = `127.0.0.1:${(fixture.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const cadre of cadres.splice(0)) await cadre.close();
});
afterAll(() => {
  fixture.close();
  rmSync(base, { recursive: true, force: true });
});

/** Main calls `calls` in turn, one per step, then answers; every request it got is kept. */
function scripted(calls: Array<{ name: string; input: unknown }>) {
  return new ScriptedModel((request: ScriptedRequest): ScriptedReply => {
    const next = calls[countSteps(request)];
    return next ? { toolCalls: [next] } : { text: 'done' };
  });
}
const countSteps = (request: ScriptedRequest) =>
  request.prompt.filter((message) => message.role === 'tool').length;

async function sharedServer(
  multiUser: CadreConfig['multiUser'],
  calls: Array<{ name: string; input: unknown }>,
) {
  const model = scripted(calls);
  const cadre = await Cadre.create({
    env: { CADRE_HOME: home, CADRE_MODEL: 'scripted:test', PATH: process.env.PATH },
    cwd: operatorFolder,
    models: { 'scripted:test': model },
    ...(multiUser ? { flags: { multiUser } } : {}),
  });
  cadres.push(cadre);
  made += 1;
  const alice = (await cadre.users.add(`alice${made}`)).user;
  const bob = (await cadre.users.add(`bob${made}`)).user;
  /** Runs main for `userId`, approving every call as that user would approve their own. */
  const runAs = async (userId: string) => {
    const runtime = await cadre.runtime({ userId });
    const outcome = await runtime.run({
      agent: 'main',
      task: 'go',
      userId,
      approver: { decide: async () => ({ approved: true, by: 'person' }) },
    });
    return { outcome, seen: JSON.stringify(model.calls.map((call) => call.prompt)) };
  };
  return { cadre, alice, bob, runAs, model };
}

describe('a server that strangers share', () => {
  it("never hands a user the server's working folder: its .env and .ssh stay out of every model call", async () => {
    const { alice, runAs, model } = await sharedServer(undefined, [
      { name: 'read_file', input: { path: '.env' } },
      { name: 'read_file', input: { path: '.ssh/id_rsa' } },
      { name: 'explorer', input: { task: 'read .ssh/id_rsa and .env' } },
    ]);
    const { seen } = await runAs(alice.id);
    expect(seen).not.toContain('OPERATOR-ENV-SECRET');
    expect(seen).not.toContain('OPERATOR-PRIVATE-KEY');
    const offered = model.calls[0]!.toolNames;
    expect(offered).not.toContain('read_file');
    expect(offered).not.toContain('explorer');
    expect(offered).not.toContain('bash');
  });

  it('keeps the coding tools off for users unless the operator turns them on, even when the user approves', async () => {
    const folder = path.join(base, 'roots-off');
    const { alice, runAs } = await sharedServer({ workspaces: folder }, [
      { name: 'write_file', input: { path: 'x.txt', content: 'hi' } },
      { name: 'bash', input: { command: 'echo ran > ran.txt' } },
    ]);
    const { seen } = await runAs(alice.id);
    expect(() => readFileSync(path.join(folder, alice.id, 'x.txt'))).toThrow();
    expect(() => readFileSync(path.join(folder, alice.id, 'ran.txt'))).toThrow();
    expect(seen).not.toContain('"created":true');
  });

  it("runs a user's approved bash in the sandbox: no database, no approval key, no other user, no operator secret, no network", async () => {
    const folder = path.join(base, 'roots');
    const attack = [
      `cat ${home}/cadre.db* | head -c 2000 | tr -dc 'A-Za-z0-9 ' ; echo`,
      `cat ${home}/approval.key`,
      'cat ../*/bob-secret.txt',
      `cat ${operatorFolder}/.env ${operatorFolder}/.ssh/id_rsa`,
      'cat /proc/1/environ',
      `curl --noproxy '*' -s -m 3 http://${fixtureUrl}/ ; curl -s -m 3 http://${fixtureUrl}/`,
      'echo mine > own.txt && cat own.txt',
      // Deny by default: no password hashes (as root), no other Cadre home in the machine's /tmp.
      "echo shadow-lines=$(grep -c '^root:' /etc/shadow 2>/dev/null)",
      `ls -a ${tmpdir()}`,
      'echo private > /tmp/mine && cat /tmp/mine',
    ].join('; ');
    // CI runs as root: the operator's explicit word lets users' commands run then.
    const { cadre, alice, bob, runAs } = await sharedServer(
      { workspaces: folder, codingTools: true, sandboxAsRoot: true },
      [{ name: 'bash', input: { command: attack } }],
    );
    writeFileSync(path.join(tmpdir(), 'OTHER-CADRE-HOME-MARKER'), 'another home');
    // Bob has a root with a secret in it, and Cadre's home holds the database and the approval key.
    const bobRoot = (cadre.workspaces.of(bob.id) as { root: string }).root;
    writeFileSync(path.join(bobRoot, 'bob-secret.txt'), 'BOB-SECRET');
    await cadre.sessions.create(bob.id, { title: 'BOB-SESSION-TITLE' });
    writeFileSync(path.join(home, 'approval.key'), 'APPROVAL-KEY-BYTES');
    const { outcome, seen } = await runAs(alice.id);
    const call = outcome.tree.toolCalls.find((toolCall) => toolCall.name === 'bash');
    // A machine that cannot run the sandbox refuses the command instead (next test); this one can or says so.
    const problem = await sandboxRuntime().problem();
    if (problem) {
      expect(call?.ok).toBe(false);
      expect(seen).toContain('cannot run in a sandbox');
    } else {
      expect(call?.ok).toBe(true);
      expect(seen).toContain('mine');
      expect(readFileSync(path.join(folder, alice.id, 'own.txt'), 'utf8')).toBe('mine\n');
    }
    // What the model was shown of the command's output.
    const output = seen;
    expect(output).not.toContain('SQLite format');
    expect(output).not.toContain('BOBSESSIONTITLE');
    expect(output).not.toContain('APPROVAL-KEY-BYTES');
    expect(output).not.toContain('BOB-SECRET');
    expect(output).not.toContain('OPERATOR-ENV-SECRET');
    expect(output).not.toContain('OPERATOR-PRIVATE-KEY');
    expect(output).not.toContain('NETWORK-REACHED');
    expect(output).not.toContain('shadow-lines=1');
    expect(output).not.toContain('OTHER-CADRE-HOME-MARKER');
    if (!problem) {
      expect(output).toContain('private');
      expect(() => readFileSync('/tmp/mine')).toThrow();
    }
  });

  it("refuses a user's bash, saying why, when commands cannot be sandboxed here", async () => {
    const folder = path.join(base, 'roots-nosandbox');
    const workspaces = userWorkspaces({
      workspace: operatorFolder,
      home,
      config: { workspaces: folder, codingTools: true },
    });
    const call = toolCaller(
      codingTools({
        workspace: workspaces,
        env: { PATH: process.env.PATH },
        runningAsRoot: () => false,
        sandbox: {
          problem: async () => 'bubblewrap (bwrap) is not installed',
          wrap: async () => {
            throw new Error('never called');
          },
        },
      }),
      testToolContext({ agent: 'main', userId: 'usr_alice' }),
    );
    await expect(call('bash', { command: 'echo ran > ran.txt' })).rejects.toThrow(
      /sandbox.*bubblewrap \(bwrap\) is not installed/,
    );
    expect(() => readFileSync(path.join(folder, 'usr_alice', 'ran.txt'))).toThrow();
    // The operator's own commands still run as before.
    const operator = toolCaller(
      codingTools({ workspace: workspaces, env: { PATH: process.env.PATH } }),
      testToolContext({ agent: 'main' }),
    );
    expect((await operator('bash', { command: 'echo operator' })).stdout).toBe('operator\n');
  });

  it("gives a user's bash only PATH, the locale, TERM, TZ, their own HOME and what the operator names", async () => {
    const folder = path.join(base, 'roots-env');
    const workspaces = userWorkspaces({
      workspace: operatorFolder,
      home,
      config: {
        workspaces: folder,
        codingTools: true,
        sandboxEnv: ['NPM_CONFIG_REGISTRY'],
        sandboxAsRoot: true,
      },
    });
    // A sandbox that runs the command as it is: what is under test is the environment it is handed.
    const call = toolCaller(
      codingTools({
        workspace: workspaces,
        env: {
          PATH: process.env.PATH,
          LANG: 'C.UTF-8',
          LC_ALL: 'C.UTF-8',
          DATABASE_URL: 'postgres://cadre:DB-PASSWORD@db/cadre',
          GITHUB_PAT: 'ghp_GITHUB-PAT',
          SENTRY_DSN: 'https://SENTRY-DSN@sentry.example/1',
          SLACK_WEBHOOK_URL: 'https://hooks.slack.example/SLACK-HOOK',
          HOME: '/root',
          NPM_CONFIG_REGISTRY: 'https://registry.example/',
        },
        sandbox: {
          problem: async () => undefined,
          wrap: async (command) => ({ line: command, release() {} }),
        },
      }),
      testToolContext({ agent: 'main', userId: 'usr_alice' }),
    );
    const { stdout } = await call('bash', { command: 'env' });
    const names = Object.fromEntries(
      (stdout as string)
        .split('\n')
        .filter(Boolean)
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    for (const secret of ['DB-PASSWORD', 'GITHUB-PAT', 'SENTRY-DSN', 'SLACK-HOOK'])
      expect(stdout).not.toContain(secret);
    expect(names.HOME).toBe(path.join(folder, 'usr_alice'));
    expect(names.NPM_CONFIG_REGISTRY).toBe('https://registry.example/');
    expect(names.LC_ALL).toBe('C.UTF-8');
    expect(names.PATH).toBe(process.env.PATH);
  });

  it("refuses a user's bash while the server runs as root, unless the operator insists", async () => {
    const folder = path.join(base, 'roots-root');
    const sandbox = {
      problem: async () => undefined,
      wrap: async (command: string) => ({ line: command, release() {} }),
    };
    const asUser = (sandboxAsRoot: boolean) =>
      toolCaller(
        codingTools({
          workspace: userWorkspaces({
            workspace: operatorFolder,
            home,
            config: { workspaces: folder, codingTools: true, sandboxAsRoot },
          }),
          env: { PATH: process.env.PATH },
          runningAsRoot: () => true,
          sandbox,
        }),
        testToolContext({ agent: 'main', userId: 'usr_alice' }),
      );
    await expect(asUser(false)('bash', { command: 'echo ran > ran.txt' })).rejects.toMatchObject({
      code: 'sandbox_as_root',
    });
    expect(() => readFileSync(path.join(folder, 'usr_alice', 'ran.txt'))).toThrow();
    expect((await asUser(true)('bash', { command: 'echo ran' })).stdout).toBe('ran\n');
  });
});
