import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { withDeclaredCallsOnly } from './valid-history.ts';

describe('a history every provider accepts', () => {
  const history: ModelMessage[] = [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'a', toolName: 'echo', input: { text: 'x' } },
        { type: 'tool-call', toolCallId: 'b', toolName: 'made_up', input: { q: 1 } },
      ],
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'a', toolName: 'echo', output: { type: 'text', value: 'x' } },
        {
          type: 'tool-result',
          toolCallId: 'b',
          toolName: 'made_up',
          output: { type: 'error-text', value: '"made_up" is not a tool this agent may use' },
        },
      ],
    },
  ];

  it('turns a call to an undeclared tool into text, and its refusal into the next user words', () => {
    const valid = withDeclaredCallsOnly(history, new Set(['echo']));
    expect(valid[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'a', toolName: 'echo', input: { text: 'x' } },
        { type: 'text', text: '(I called "made_up" with {"q":1}.)' },
      ],
    });
    expect(valid[2]).toMatchObject({ role: 'tool', content: [{ toolCallId: 'a' }] });
    expect(valid[3]).toEqual({
      role: 'user',
      content: 'The call to "made_up" was refused: "made_up" is not a tool this agent may use',
    });
  });

  it('leaves a history of declared calls as it is', () => {
    expect(withDeclaredCallsOnly(history, new Set(['echo', 'made_up']))).toBe(history);
  });
});
