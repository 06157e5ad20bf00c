import { describe, expect, it } from 'vitest';
import {
  heldGate,
  isMain,
  isMath,
  mathDelegation,
  postJson,
  readChunks,
  readMessage,
  testServer,
} from '../../../test/helpers/server.ts';
import { OPERATOR } from '../../app/user-workspaces.ts';
import type { ScriptedRequest } from '../../models/scripted-model.ts';
import { markInterruptedRuns } from '../../store/sqlite/run-maintenance.ts';

/**
 * useChat sends a message of the conversation again in three ways: `regenerate()` (the same question, its
 * answer dropped), `sendMessage({ messageId, text })` (an edit: the question replaced, what followed
 * dropped) and a retry after a failed request. Each time the client's conversation ends at that question,
 * and the stored session must match it, or a reload shows a question twice and answers to questions the
 * person took back.
 */

const user = (id: string, text: string) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const assistant = (id: string, text: string) => ({ id, role: 'assistant', parts: [{ type: 'text', text }] });

/** Main answers with the numbered answer and what it was asked, and how many questions its history had. */
function answering() {
  let count = 0;
  return (request: ScriptedRequest) => {
    if (!isMain(request.system)) return { text: 'unexpected agent' };
    const questions = request.prompt.filter((message) => message.role === 'user');
    const asked = JSON.stringify(questions.at(-1)?.content).match(/Q: ([^"\\]*)/)?.[1];
    return { text: `answer ${++count} to ${asked} (${questions.length} questions seen)` };
  };
}

/** A server whose first model call waits for `release` (an answer still running while the test acts); answer N is `answer N`. */
async function firstAnswerHeld() {
  const { gate, release } = heldGate();
  let calls = 0;
  let firstAsked: () => void = () => {};
  /** Resolves once the first answer's model request is out (and held). */
  const asked = new Promise<void>((resolve) => {
    firstAsked = resolve;
  });
  const server = await testServer(async () => {
    const call = ++calls;
    if (call === 1) {
      firstAsked();
      await gate;
    }
    return { text: `answer ${call}` };
  });
  return { ...server, release, asked };
}

async function conversation(app: Awaited<ReturnType<typeof testServer>>['app'], body: unknown) {
  const response = await app.request('/api/chat', postJson(body));
  expect(response.status).toBe(200);
  return readMessage(await readChunks(response));
}

const stored = async (cadre: Awaited<ReturnType<typeof testServer>>['cadre'], sessionId: string) =>
  (await cadre.sessions.get('local', sessionId)).messages.map(
    (message) => `${message.role}:${message.id.startsWith('msg_') ? '' : `${message.id}:`}${message.content}`,
  );

describe('a message of the session sent again', () => {
  it('regenerate replaces the last answer; the question is stored once and the model sees the history before it', async () => {
    const { app, cadre } = await testServer(answering());
    const first = await conversation(app, { id: 's1', messages: [user('u1', 'Q: one')] });
    const second = await conversation(app, {
      id: 's1',
      messages: [user('u1', 'Q: one'), assistant(first.id, 'answer 1'), user('u2', 'Q: two')],
    });
    expect(await stored(cadre, 's1')).toEqual([
      'user:u1:Q: one',
      'assistant:answer 1 to one (1 questions seen)',
      'user:u2:Q: two',
      'assistant:answer 2 to two (2 questions seen)',
    ]);

    // useChat's regenerate(): the last answer dropped, the conversation sent up to its question.
    await conversation(app, {
      id: 's1',
      trigger: 'regenerate-message',
      messageId: second.id,
      messages: [user('u1', 'Q: one'), assistant(first.id, 'answer 1'), user('u2', 'Q: two')],
    });
    expect(await stored(cadre, 's1')).toEqual([
      'user:u1:Q: one',
      'assistant:answer 1 to one (1 questions seen)',
      'user:u2:Q: two',
      'assistant:answer 3 to two (2 questions seen)',
    ]);
  });

  it('an edit of an earlier question replaces it and drops everything after it', async () => {
    const { app, cadre } = await testServer(answering());
    const first = await conversation(app, { id: 's2', messages: [user('u1', 'Q: one')] });
    await conversation(app, {
      id: 's2',
      messages: [user('u1', 'Q: one'), assistant(first.id, 'answer 1'), user('u2', 'Q: two')],
    });
    // sendMessage({ messageId: 'u1', text }): the client's conversation is now only the edited question.
    await conversation(app, { id: 's2', messages: [user('u1', 'Q: uno')] });
    expect(await stored(cadre, 's2')).toEqual([
      'user:u1:Q: uno',
      'assistant:answer 3 to uno (1 questions seen)',
    ]);
    const session = await cadre.sessions.get('local', 's2');
    expect(session.messages[0]!.parts).toEqual([{ type: 'text', text: 'Q: uno' }]);
    // It was the first question: the session's title follows the edit.
    expect(session.title).toBe('Q: uno');
  });

  it('keeps what regenerate and edit replaced as versions, each answer with its own run tree', async () => {
    const { app, cadre } = await testServer(answering());
    const first = await conversation(app, { id: 's9', messages: [user('u1', 'Q: one')] });
    const regenerated = await conversation(app, {
      id: 's9',
      trigger: 'regenerate-message',
      messageId: first.id,
      messages: [user('u1', 'Q: one')],
    });
    await conversation(app, { id: 's9', messages: [user('u1', 'Q: uno')] });
    expect(await stored(cadre, 's9')).toEqual([
      'user:u1:Q: uno',
      'assistant:answer 3 to uno (1 questions seen)',
    ]);

    const body = (await (await app.request('/api/sessions/s9')).json()) as {
      messages: Array<{ id: string; parts: Array<{ text?: string }> }>;
      versions: Array<{
        id: string;
        afterId: string | null;
        messages: Array<{
          id: string;
          role: string;
          parts: Array<{ text?: string }>;
          metadata?: { rootRunId?: string };
        }>;
      }>;
    };
    // The current branch as before; both earlier versions begin the session (afterId null), oldest first.
    expect(body.messages.map((message) => message.parts.find((part) => part.text)?.text)).toEqual([
      'Q: uno',
      'answer 3 to uno (1 questions seen)',
    ]);
    expect(body.versions.map((version) => version.afterId)).toEqual([null, null]);
    const texts = body.versions.map((version) =>
      version.messages.map((message) => message.parts.find((part) => part.text)?.text),
    );
    expect(texts).toEqual([
      ['Q: one', 'answer 1 to one (1 questions seen)'],
      ['Q: one', 'answer 2 to one (1 questions seen)'],
    ]);
    expect(body.versions[1]!.messages[1]!.id).toBe(regenerated.id);
    // Each version's answer keeps its own run, still reachable.
    const runIds = body.versions.map((version) => version.messages[1]!.metadata?.rootRunId);
    expect(new Set(runIds).size).toBe(2);
    for (const runId of runIds) {
      const tree = await (await app.request(`/api/runs/${runId}`)).json();
      expect(JSON.stringify(tree)).toContain('Q: one');
    }

    // The first version made current again: the next question continues from it, with its history.
    const restore = (versionId: string, sessionId = 's9') =>
      app.request(`/api/sessions/${sessionId}/versions/${versionId}/restore`, { method: 'POST' });
    expect((await restore('ver_nope')).status).toBe(404);
    expect((await restore(body.versions[0]!.id, 'nobody')).status).toBe(404);
    const restored = await restore(body.versions[0]!.id);
    expect(restored.status).toBe(200);
    const after = (await restored.json()) as typeof body;
    expect(after.messages.map((message) => message.parts.find((part) => part.text)?.text)).toEqual([
      'Q: one',
      'answer 1 to one (1 questions seen)',
    ]);
    expect(after.versions).toHaveLength(2);
    await conversation(app, {
      id: 's9',
      messages: [user('u1', 'Q: one'), assistant(after.messages[1]!.id, 'answer 1'), user('u3', 'Q: three')],
    });
    expect(await stored(cadre, 's9')).toEqual([
      'user:u1:Q: one',
      'assistant:answer 1 to one (1 questions seen)',
      'user:u3:Q: three',
      'assistant:answer 4 to three (2 questions seen)',
    ]);
  });

  it('a question sent again while its first answer still runs stops that answer, which never lands after it', async () => {
    const { app, cadre, release } = await firstAnswerHeld();
    const firstResponse = await app.request(
      '/api/chat',
      postJson({ id: 's3', messages: [user('u1', 'Q: one')] }),
    );
    const firstChunks = readChunks(firstResponse);
    const retried = await app.request('/api/chat', postJson({ id: 's3', messages: [user('u1', 'Q: one')] }));
    expect(retried.status).toBe(200);
    const retry = await readMessage(await readChunks(retried));
    release();
    const first = await readMessage(await firstChunks);
    expect(first.metadata?.status).toBe('cancelled');
    expect(retry.metadata?.status).toBe('ok');
    expect(await stored(cadre, 's3')).toEqual(['user:u1:Q: one', 'assistant:answer 2']);
  });

  it('a new question from another tab while an answer is being written is refused, so answers never interleave', async () => {
    const { app, cadre, release } = await firstAnswerHeld();
    const first = await app.request('/api/chat', postJson({ id: 's9', messages: [user('u1', 'Q: one')] }));
    const firstChunks = readChunks(first);
    // The other tab asks its own question meanwhile: refused, saying why; nothing of it is stored.
    const refused = await app.request('/api/chat', postJson({ id: 's9', messages: [user('u2', 'Q: two')] }));
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('answer_running');
    expect(body.error.message).toMatch(/still being written in session s9/);
    release();
    expect((await readMessage(await firstChunks)).metadata?.status).toBe('ok');
    // Once the answer is in, the other tab's question goes through and is answered after it.
    const second = await conversation(app, { id: 's9', messages: [user('u2', 'Q: two')] });
    expect(second.metadata?.status).toBe('ok');
    expect(await stored(cadre, 's9')).toEqual([
      'user:u1:Q: one',
      'assistant:answer 1',
      'user:u2:Q: two',
      'assistant:answer 2',
    ]);
  });

  it('the same question sent again twice at once (a double click, two tabs) is stored once, with one answer', async () => {
    const { app, cadre } = await testServer(answering());
    await conversation(app, { id: 's6', messages: [user('u1', 'Q: one')] });
    const again = postJson({ id: 's6', trigger: 'regenerate-message', messages: [user('u1', 'Q: one')] });
    const responses = await Promise.all([app.request('/api/chat', again), app.request('/api/chat', again)]);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    const answers = await Promise.all(
      responses.map(async (response) => readMessage(await readChunks(response))),
    );
    // One replaced the other: the one replaced was stopped (or had ended) and went with its question.
    expect(answers.some((answer) => answer.metadata?.status === 'ok')).toBe(true);
    const messages = await stored(cadre, 's6');
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBe('user:u1:Q: one');
    expect(messages[1]).toMatch(/^assistant:answer [23] to one \(1 questions seen\)$/);
  });

  it('a resend refused (its model has no key) leaves the session as it was', async () => {
    const { app, cadre } = await testServer(answering());
    const first = await conversation(app, { id: 's7', messages: [user('u1', 'Q: one')] });
    await conversation(app, {
      id: 's7',
      messages: [user('u1', 'Q: one'), assistant(first.id, 'answer 1'), user('u2', 'Q: two')],
    });
    const before = await stored(cadre, 's7');
    expect(before).toHaveLength(4);
    // A model with no key here: the page refuses choosing one, so it is saved as a config file would name it.
    await cadre.settings.updateAgent(OPERATOR, 'main', { model: 'openai:gpt-5-mini' });

    const regenerate = await app.request(
      '/api/chat',
      postJson({
        id: 's7',
        trigger: 'regenerate-message',
        messages: [user('u1', 'Q: one'), assistant(first.id, 'answer 1'), user('u2', 'Q: two')],
      }),
    );
    expect(regenerate.status).toBe(503);
    expect(await regenerate.text()).toContain('OPENAI_API_KEY');
    expect(await stored(cadre, 's7')).toEqual(before);
    // A new question refused the same way is not stored either: a reload shows what there was.
    const next = await app.request('/api/chat', postJson({ id: 's7', messages: [user('u3', 'Q: three')] }));
    expect(next.status).toBe(503);
    expect(await stored(cadre, 's7')).toEqual(before);
  });

  it('an answer cut off by a dead process is no longer offered for resuming once its question was sent again', async () => {
    const { app, cadre, store } = await testServer(answering());
    await conversation(app, { id: 's8', messages: [user('u1', 'Q: one')] });
    await cadre.store.runs.flush();
    // As if the process had died while answering: the run is interrupted, its journal open.
    const db = store.database;
    const root = db.prepare('SELECT id FROM runs WHERE parent_id IS NULL').get() as { id: string };
    db.prepare("DELETE FROM events WHERE type = 'run-finish'").run();
    db.prepare("UPDATE runs SET status = 'running', owner_pid = 999999999").run();
    await markInterruptedRuns(db, { isAlive: () => false });
    const offered = async () =>
      ((await (await app.request('/api/sessions/s8')).json()) as { interrupted: Array<{ runId: string }> })
        .interrupted;
    expect((await offered()).map((answer) => answer.runId)).toEqual([root.id]);

    // The person edits the question instead: the cut-off answer belonged to the question replaced.
    await conversation(app, { id: 's8', messages: [user('u1', 'Q: uno')] });
    expect(await offered()).toEqual([]);
    const resumed = await app.request(`/api/runs/${root.id}/resume`, { method: 'POST' });
    expect(resumed.status).toBe(409);
    expect(await resumed.text()).toMatch(/sent again or edited/);
    expect(await stored(cadre, 's8')).toEqual([
      'user:u1:Q: uno',
      'assistant:answer 2 to uno (1 questions seen)',
    ]);
  });

  it("a message id another session holds is that session's: this one is stored under it too, and a resend replaces only here", async () => {
    const { app, cadre } = await testServer(answering());
    await conversation(app, { id: 's4', messages: [user('u1', 'Q: one')] });
    await conversation(app, { id: 's5', messages: [user('u1', 'Q: other')] });
    expect(await stored(cadre, 's4')).toEqual([
      'user:u1:Q: one',
      'assistant:answer 1 to one (1 questions seen)',
    ]);
    expect(await stored(cadre, 's5')).toEqual([
      'user:u1:Q: other',
      'assistant:answer 2 to other (1 questions seen)',
    ]);

    // A client that numbers its messages per conversation: sending s5's "u1" again (a retry, an edit)
    // replaces it there, and s4's stays.
    await conversation(app, { id: 's5', messages: [user('u1', 'Q: other, edited')] });
    expect(await stored(cadre, 's5')).toEqual([
      'user:u1:Q: other, edited',
      'assistant:answer 3 to other, edited (1 questions seen)',
    ]);
    expect(await stored(cadre, 's4')).toEqual([
      'user:u1:Q: one',
      'assistant:answer 1 to one (1 questions seen)',
    ]);
  });

  it('regenerate runs the sub-agents anew instead of handing back their earlier result; a new question may reuse it', async () => {
    const mathCalls: string[] = [];
    const { app, cadre } = await testServer((request: ScriptedRequest) => {
      if (isMath(request.system)) mathCalls.push(request.prompt.at(-1)?.role ?? '');
      return mathDelegation(request);
    });
    const first = await conversation(app, { id: 's9', messages: [user('u1', 'What is 17 times 23?')] });
    const ran = mathCalls.length;
    expect(ran).toBeGreaterThan(0);

    const regenerated = await conversation(app, {
      id: 's9',
      trigger: 'regenerate-message',
      messageId: first.id,
      messages: [user('u1', 'What is 17 times 23?')],
    });
    expect(mathCalls.length).toBe(2 * ran);
    const delegated = regenerated.parts.find((part) => part.type === 'dynamic-tool');
    expect(JSON.stringify(delegated)).not.toContain('reused');

    // A new question delegating the same task in the same session is answered from math's last result.
    await conversation(app, {
      id: 's9',
      messages: [
        user('u1', 'What is 17 times 23?'),
        assistant(regenerated.id, 'x'),
        user('u2', 'Again: 17 times 23?'),
      ],
    });
    expect(mathCalls.length).toBe(2 * ran);
    expect(await stored(cadre, 's9')).toHaveLength(4);
  });

  it('an answer whose question another process replaced meanwhile is not kept', async () => {
    const { app, cadre, release, asked } = await firstAnswerHeld();
    const response = await app.request(
      '/api/chat',
      postJson({ id: 's10', messages: [user('u1', 'Q: one')] }),
    );
    const chunks = readChunks(response);
    // Another process (a terminal's cadre chat on the same session) edits the question while this answer
    // runs (its model request is out); this process knows nothing of it.
    await asked;
    await cadre.store.sessions.removeFrom('local', 's10', 'u1');
    await cadre.store.sessions.append('local', 's10', { id: 'u1', role: 'user', content: 'Q: uno' });
    await cadre.store.sessions.append('local', 's10', { role: 'assistant', content: 'the other answer' });
    release();
    const first = await readMessage(await chunks);
    expect(first.metadata?.status).toBe('ok');
    expect(await stored(cadre, 's10')).toEqual(['user:u1:Q: uno', 'assistant:the other answer']);
  });
});
