import { afterEach, describe, expect, it } from 'vitest';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';

let servers: ServeProcess[] = [];
afterEach(() => {
  for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
  servers = [];
});

/** The users commands run in this process; the server they change is a real `cadre serve` bound beyond loopback. */
describe('cadre users and a server that needs tokens', () => {
  it('refuses a non-loopback address without credentials, saying how to add a token', async () => {
    const result = await cadreInProcess(['serve', '--host', '0.0.0.0', '--port', '0'], {
      CADRE_HOME: tempHome(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cadre users add NAME');
    expect(result.stderr).toContain('CADRE_TOKEN');
    expect(result.stdout).not.toContain('listening');
  });

  it('adds, lists and removes users; their tokens open the API of a server bound beyond loopback', async () => {
    const env = { CADRE_HOME: tempHome() };
    const added = await cadreInProcess(['users', 'add', 'alice', '--json'], env);
    expect(added.code).toBe(0);
    const { name, token } = JSON.parse(added.stdout) as { name: string; token: string };
    expect(name).toBe('alice');
    expect(token).toMatch(/^cadre_[\w-]{12}_[\w-]{43}$/);
    const plain = await cadreInProcess(['users', 'add', 'bob'], env);
    expect(plain.stdout).toMatch(/shown once/);
    expect((await cadreInProcess(['users', 'add', 'bob'], env)).code).toBe(2);
    const list = await cadreInProcess(['users', 'list', '--json'], env);
    expect(
      (JSON.parse(list.stdout) as { users: Array<{ name: string }> }).users.map((user) => user.name),
    ).toEqual(['alice', 'bob']);
    expect(list.stdout).not.toContain(token);

    const server = await startServe(['--host', '0.0.0.0', '--port', '0'], env);
    servers.push(server);
    const url = server.url.replace('0.0.0.0', '127.0.0.1');
    expect((await fetch(`${url}/api/sessions`)).status).toBe(401);
    expect(
      (await fetch(`${url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    expect((await fetch(`${url}/health`)).status).toBe(200);

    expect((await cadreInProcess(['users', 'rm', 'alice'], env)).code).toBe(0);
    expect(
      (await fetch(`${url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
    expect((await cadreInProcess(['users', 'rm', 'alice'], env)).code).toBe(2);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(server.output()).not.toContain(token);
  });
});
