/**
 * `cadre serve --no-worker` in front of a `cadre worker` on PostgreSQL: the chat streams a tree the worker
 * runs as the embedded mode does (data-run parts, the stored session), a document one process added is
 * read and searched on the worker, and a Stop reaches the worker's runs within a second.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseJsonEventStream, uiMessageChunkSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { startServe } from '../helpers/serve.ts';
import { chatBody, readChunks, readMessage } from '../helpers/server.ts';
import { isMain, isMath } from '../web/web-app-setup.ts';

const isAnalyst = (system: string) => system.includes("You are Cadre's document analyst");

async function setUp(script: Parameters<typeof startOpenAIServer>[0], name: string, config?: object) {
  const model = await startOpenAIServer(script);
  const home = tempHome();
  if (config) writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  const env = {
    ...fixtureModelEnv(model, home),
    CADRE_DATABASE_URL: await freshSchema(name),
  };
  const worker = await startWorker(env, 'w1', ['--concurrency', '2']);
  const server = await startServe(['--port', '0', '--no-worker'], env);
  return { model, env, worker, server };
}

describe.skipIf(!TEST_DATABASE_URL)('cadre serve --no-worker with a cadre worker', () => {
  it('streams a chat whose tree the worker runs, with its run parts, and stores the session', async () => {
    const { server, model } = await setUp(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isMain(system) && last?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
      if (isMain(system)) return { text: 'The product is 391.' };
      if (isMath(system)) return { text: '17 × 23 = 391' };
      return { text: 'unexpected' };
    }, 'serve');
    try {
      const response = await fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatBody('s_pg_chat', 'What is 17 × 23?'),
      });
      expect(response.status).toBe(200);
      const message = await readMessage(await readChunks(response));
      const text = message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      expect(text).toBe('The product is 391.');
      const runs = message.parts.flatMap((part) =>
        part.type === 'data-run' ? [part.data as { agent: string; status: string }] : [],
      );
      expect(runs).toEqual(
        expect.arrayContaining([expect.objectContaining({ agent: 'math', status: 'ok' })]),
      );
      const session = (await (await fetch(`${server.url}/api/sessions/s_pg_chat`)).json()) as {
        messages: Array<{ role: string; parts: Array<{ type: string; text?: string; data?: unknown }> }>;
      };
      const textOf = (parts: Array<{ type: string; text?: string }>) =>
        parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      expect(session.messages.map((stored) => [stored.role, textOf(stored.parts)])).toEqual([
        ['user', 'What is 17 × 23?'],
        ['assistant', 'The product is 391.'],
      ]);
      const stored = session.messages[1]!.parts.find((part) => part.type === 'data-run')!.data as {
        rootRunId: string;
      };
      const tree = (await (await fetch(`${server.url}/api/runs/${stored.rootRunId}`)).json()) as {
        worker?: string;
        children: Array<{ worker?: string }>;
      };
      expect(tree.worker).toBe('w1');
      expect(tree.children[0]?.worker).toBe('w1');
    } finally {
      server.child.kill('SIGKILL');
      await model.close();
    }
  }, 60_000);

  // Going on from its journal, main replays its first step: those events are stored already, and the
  // store's cursors must not skip them, or the asker, which numbers the events it follows as it reads
  // them, reads the tree's last events (the answer) a second time once the tree has ended.
  it('a main set aside while its sub-agents run streams its answer once', async () => {
    const { server, model, worker } = await setUp(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isMain(system) && last?.role === 'user')
        return {
          toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'math', arguments: { task: `Compute part ${n}.` } })),
        };
      if (isMain(system))
        return { text: 'The product of seventeen and twenty-three is 391.', pieceDelayMs: 50 };
      // Longer than a parent waits before its job is set aside.
      if (isMath(system)) return { text: '17 × 23 = 391', delayMs: 1_500 };
      return { text: 'unexpected' };
    }, 'serve_set_aside');
    try {
      const response = await fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatBody('s_pg_set_aside', 'What is 17 × 23?'),
      });
      const chunks = await readChunks(response);
      expect(worker.output()).toMatch(/set aside tree job/);
      const texts = chunks.flatMap((chunk) => (chunk.type === 'text-start' ? [chunk.id] : []));
      expect(texts).toHaveLength(1);
      const message = await readMessage(chunks);
      const text = message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      expect(text).toBe('The product of seventeen and twenty-three is 391.');
      // The stored answer has it once too.
      const session = (await (await fetch(`${server.url}/api/sessions/s_pg_set_aside`)).json()) as {
        messages: Array<{ role: string; parts: Array<{ type: string; text?: string }> }>;
      };
      const stored = session.messages[1]?.parts.filter((part) => part.type === 'text') ?? [];
      expect(stored.map((part) => part.text)).toEqual(['The product of seventeen and twenty-three is 391.']);
    } finally {
      server.child.kill('SIGKILL');
      await model.close();
    }
  }, 60_000);

  it('reads and searches on the worker a document another process added', async () => {
    const { server, model, env } = await setUp(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isAnalyst(system)) {
        const searched = body.messages.filter((message) => message.role === 'tool').length;
        if (searched === 0)
          return { toolCalls: [{ name: 'search_within_document', arguments: { query: 'herons' } }] };
        return { text: 'Herons wait in shallow water.' };
      }
      if (isMain(system) && last?.role === 'user') {
        const id = /\(id ([^,]+), markdown/.exec(system)?.[1] ?? 'missing';
        return {
          toolCalls: [
            { name: 'analyze_document', arguments: { document_id: id, task: 'Where do herons wait?' } },
          ],
        };
      }
      return { text: 'In shallow water.' };
    }, 'docs');
    try {
      const folder = mkdtempSync(join(tmpdir(), 'cadre-doc-'));
      const file = join(folder, 'field-notes.md');
      writeFileSync(file, '# Field notes\n\nOwls hunt at night. Herons wait in shallow water.\n');
      const added = await runCli(['docs', 'add', file], env);
      expect(added.code).toBe(0);
      const response = await fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatBody('s_pg_docs', 'Where do herons wait in my notes?'),
      });
      const message = await readMessage(await readChunks(response));
      expect(message.parts.some((part) => part.type === 'text' && part.text === 'In shallow water.')).toBe(
        true,
      );
      const analyst = model.requests.filter((request) => isAnalyst(request.system));
      // The whole document reached the analyst on the worker, and its search found the passage.
      expect(analyst[0]?.system).toContain('Owls hunt at night. Herons wait in shallow water.');
      const searchResult = JSON.stringify(analyst[1]?.body.messages.filter((m) => m.role === 'tool'));
      expect(searchResult).toContain('Herons wait in shallow water');
    } finally {
      server.child.kill('SIGKILL');
      await model.close();
    }
  }, 60_000);

  it('a Stop on the server ends the runs on the worker within a second', async () => {
    const { server, model } = await setUp(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isMain(system) && last?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: 'Work on this for a long time.' } }] };
      if (isMath(system)) return { hang: true };
      return { text: 'Stopped.' };
    }, 'stop');
    try {
      const response = await fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatBody('s_pg_stop', 'Take your time.'),
      });
      // Read until the sub-agent's run part arrives: then the tree runs on the worker.
      const reader = parseJsonEventStream({
        stream: response.body!,
        schema: uiMessageChunkSchema,
      }).getReader();
      let rootRunId: string | undefined;
      while (!rootRunId) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended before the sub-agent started');
        const chunk = value.success
          ? (value.value as { type: string; data?: { agent?: string; rootRunId?: string } })
          : undefined;
        if (chunk?.type === 'data-run' && chunk.data?.agent === 'math') rootRunId = chunk.data.rootRunId;
      }
      while (!model.requests.some((request) => isMath(request.system)))
        await new Promise((resolve) => setTimeout(resolve, 50));
      const reading = (async () => {
        for (;;) if ((await reader.read()).done) return;
      })();
      const stoppedAt = Date.now();
      const stop = await fetch(`${server.url}/api/runs/${rootRunId}/cancel`, { method: 'POST' });
      expect(await stop.json()).toEqual({ cancelled: true });
      await reading;
      const stoppedMs = Date.now() - stoppedAt;
      const tree = (await (await fetch(`${server.url}/api/runs/${rootRunId}`)).json()) as {
        status: string;
        children: Array<{ status: string; endedAt: string }>;
      };
      expect(tree.status).toBe('cancelled');
      expect(tree.children.map((child) => child.status)).toEqual(['cancelled']);
      expect(Date.parse(tree.children[0]!.endedAt) - stoppedAt).toBeLessThan(1_000);
      expect(stoppedMs).toBeLessThan(5_000);
    } finally {
      server.child.kill('SIGKILL');
      await model.close();
    }
  }, 60_000);

  it('an approval asked on the worker is listed and answered by another server; a terminal answers its own', async () => {
    const script = ({ body, system }: { body: { messages: Array<{ role: string }> }; system: string }) => {
      const last = body.messages.at(-1);
      if (isMain(system) && last?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
      if (isMain(system)) return { text: 'The product is 391.' };
      if (isMath(system) && last?.role === 'user')
        return { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] };
      if (isMath(system)) return { text: '17 × 23 = 391' };
      return { text: 'unexpected' };
    };
    const { server, model, env } = await setUp(script, 'approve', { approvals: { ask: ['calculate'] } });
    const other = await startServe(['--port', '0', '--no-worker'], env);
    try {
      const response = fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatBody('s_pg_approve', 'What is 17 × 23?'),
      });
      let pending: Array<{ approvalId: string; tool: string; input: unknown }> = [];
      const started = Date.now();
      while (!pending.length) {
        if (Date.now() - started > 20_000) throw new Error('no approval was ever pending');
        await new Promise((resolve) => setTimeout(resolve, 100));
        pending = (
          (await (await fetch(`${other.url}/api/approvals`)).json()) as { approvals: typeof pending }
        ).approvals;
      }
      expect(pending.map((approval) => [approval.tool, approval.input])).toEqual([
        ['calculate', { expression: '17 * 23' }],
      ]);
      const answered = await fetch(`${other.url}/api/approvals/${pending[0]!.approvalId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ approved: true }),
      });
      expect(await answered.json()).toEqual({ approvalId: pending[0]!.approvalId, approved: true });
      const message = await readMessage(await readChunks(await response));
      expect(message.parts.some((part) => part.type === 'text' && part.text === 'The product is 391.')).toBe(
        true,
      );
      // The calculation ran on the worker: its result reached the sub-agent's next request.
      const toolTurn = model.requests.find(
        (request) => isMath(request.system) && request.body.messages.at(-1)?.role === 'tool',
      );
      expect(JSON.stringify(toolTurn?.body.messages.at(-1))).toContain('391');
      expect((await (await fetch(`${other.url}/api/approvals`)).json()).approvals).toEqual([]);

      // A terminal's --approve-all answers what its tree asks on the worker.
      const asked = await runCli(['ask', '--no-worker', '--approve-all', '--json', 'What is 17 × 23?'], env);
      expect(asked.code).toBe(0);
      const printed = JSON.parse(asked.stdout) as {
        answer: string;
        run: { children: Array<{ toolCalls: Array<{ ok: boolean }> }> };
      };
      expect(printed.answer).toBe('The product is 391.');
      expect(printed.run.children[0]?.toolCalls.map((call) => call.ok)).toEqual([true]);
    } finally {
      other.child.kill('SIGKILL');
      server.child.kill('SIGKILL');
      await model.close();
    }
  }, 90_000);
});
