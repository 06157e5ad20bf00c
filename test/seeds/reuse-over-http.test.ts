import { describe, expect, it } from 'vitest';
import type { RunPartData } from '../../src/app/answer/protocol.ts';
import type { CadreEvent } from '../../src/core/events.ts';
import type { ScriptedRequest } from '../../src/models/scripted-model.ts';
import {
  chatBody,
  isMain,
  isMath,
  postJson,
  readChunks,
  readMessage,
  testServer,
} from '../helpers/server.ts';

describe('POST /api/chat reuses a sub-agent result within the session', () => {
  it('the second question gets the earlier result, shown as a reused tool call, with no new run', async () => {
    const script = (request: ScriptedRequest) => {
      const fromTool = request.prompt.at(-1)?.role === 'tool';
      if (isMain(request.system))
        return fromTool
          ? { text: 'It is 391.' }
          : { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] };
      if (isMath(request.system)) return { text: '17 * 23 = 391' };
      return { text: 'unexpected agent' };
    };
    const { app, model } = await testServer(script);
    const ask = async (text: string) => {
      const response = await app.request('/api/chat', postJson(chatBody('s1', text)));
      expect(response.status).toBe(200);
      const chunks = await readChunks(response);
      const events = chunks
        .filter((chunk) => chunk.type === 'data-run-event')
        .map((chunk) => (chunk as { data: CadreEvent }).data);
      return { message: await readMessage(chunks), events };
    };
    const mathCalls = () => model.calls.filter((call) => isMath(call.system)).length;

    const first = (await ask('What is 17 times 23?')).message;
    const firstRuns = first.parts
      .filter((part) => part.type === 'data-run')
      .map((part) => part.data as RunPartData);
    const mathRun = firstRuns.find((run) => run.agent === 'math')!;
    expect(mathCalls()).toBe(1);

    const { message: second } = await ask('Remind me: 17 times 23?');
    expect(mathCalls()).toBe(1);
    const runs = second.parts
      .filter((part) => part.type === 'data-run')
      .map((part) => part.data as RunPartData);
    expect(runs.map((run) => run.agent)).toEqual(['main']);
    const tool = second.parts.find((part) => part.type === 'dynamic-tool');
    // Main's own delegation is a dynamic tool part; the reused one names the run it came from.
    expect(tool).toMatchObject({
      toolName: 'math',
      state: 'output-available',
      toolMetadata: { reused: { runId: mathRun.runId, finishedAt: expect.any(String) } },
    });
    // The stored answer keeps the mark, so a reload shows it too.
    const session = (await (await app.request('/api/sessions/s1')).json()) as {
      messages: Array<{ role: string; parts: Array<{ type: string; toolMetadata?: unknown }> }>;
    };
    const stored = session.messages.at(-1)!.parts.find((part) => part.type === 'dynamic-tool');
    expect(stored?.toolMetadata).toEqual((tool as { toolMetadata: unknown }).toolMetadata);
  });
});
