/**
 * `npx node bench/session-id-probe.ts`: what a stranger can learn from timing about a session id another
 * user has (issue 23, item 16). Alice has a session with 40 messages; bob asks about her id and about an
 * unused one, in alternation, through the server app (in process, so the network adds no noise), and the
 * medians and 90th percentiles of both are printed side by side for each route. `BENCH_DATABASE_URL`
 * runs it on PostgreSQL instead of a SQLite file. Not part of `npm run bench`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cadre } from '../src/app/create-cadre.ts';
import { createServerApp } from '../src/server/create-server-app.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 2000);
const home = mkdtempSync(join(tmpdir(), 'cadre-session-probe-'));
const url = process.env.BENCH_DATABASE_URL;
const cadre = await Cadre.create({
  env: {
    CADRE_HOME: home,
    CADRE_MODEL: 'scripted:x',
    ...(url ? { CADRE_DATABASE_URL: url } : {}),
  },
  cwd: home,
  models: {},
});
const app = createServerApp({ cadre });
const suffix = Date.now().toString(36);
const alice = await cadre.users.add(`alice-${suffix}`);
const bob = { authorization: `Bearer ${(await cadre.users.add(`bob-${suffix}`)).token}` };
const theirs = `chat-${suffix}`;
await cadre.sessions.create(alice.user.id, { id: theirs, title: 'Alice' });
for (let index = 0; index < 40; index++) {
  await cadre.store.sessions.append(alice.user.id, theirs, {
    role: index % 2 ? 'assistant' : 'user',
    content: 'x'.repeat(2_000),
  });
}
const unused = `chat-${suffix.split('').reverse().join('')}`;

const routes: Array<[string, (id: string) => Promise<Response>]> = [
  ['GET /api/sessions/:id', (id) => Promise.resolve(app.request(`/api/sessions/${id}`, { headers: bob }))],
  [
    'GET /api/chat/:id/stream',
    (id) => Promise.resolve(app.request(`/api/chat/${id}/stream`, { headers: bob })),
  ],
  [
    'GET /api/sessions/:id/export',
    (id) => Promise.resolve(app.request(`/api/sessions/${id}/export?format=json`, { headers: bob })),
  ],
  [
    'PATCH /api/sessions/:id',
    (id) =>
      Promise.resolve(
        app.request(`/api/sessions/${id}`, {
          method: 'PATCH',
          headers: { ...bob, 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'Mine now' }),
        }),
      ),
  ],
  [
    'DELETE /api/sessions/:id',
    (id) => Promise.resolve(app.request(`/api/sessions/${id}`, { method: 'DELETE', headers: bob })),
  ],
];

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const micro = (ms: number) => `${Math.round(ms * 1000)} µs`;

console.log(
  `session id probe (${url ? 'PostgreSQL' : 'SQLite file'}, ${rounds} rounds per id, node ${process.version})`,
);
for (const [route, probe] of routes) {
  const times = { theirs: [] as number[], unused: [] as number[] };
  const statuses = new Set<string>();
  for (let round = 0; round < rounds + 100; round++) {
    // Alternating, and which goes first swaps each round, so drift in the machine's load hits both alike.
    const order: Array<'theirs' | 'unused'> = round % 2 ? ['theirs', 'unused'] : ['unused', 'theirs'];
    for (const which of order) {
      const started = performance.now();
      const response = await probe(which === 'theirs' ? theirs : unused);
      await response.arrayBuffer();
      const ms = performance.now() - started;
      statuses.add(`${which} ${response.status}`);
      if (round >= 100) times[which].push(ms);
    }
  }
  console.log(
    `  ${route.padEnd(30)} her id: median ${micro(percentile(times.theirs, 0.5))}, p90 ${micro(percentile(times.theirs, 0.9))}` +
      ` | unused id: median ${micro(percentile(times.unused, 0.5))}, p90 ${micro(percentile(times.unused, 0.9))}` +
      ` | statuses ${[...statuses].sort().join(', ')}`,
  );
}
await cadre.close();
rmSync(home, { recursive: true, force: true });
