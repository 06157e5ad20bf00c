import type { ModelMessage } from 'ai';

/**
 * A conversation every provider accepts, whatever the model called. A call to a tool the request does not
 * declare (a name the model made up, refused before it ran) stays in AI SDK's history as a tool call with
 * an error result; Gemini refuses a history whose function calls name no declared function, so the next
 * request of the run would fail. Here such a call becomes what it was: text in the assistant's turn saying
 * what it tried, and the refusal as the person's next words, which the model still reads.
 *
 * Returns `messages` itself when nothing needed a change.
 */
export function withDeclaredCallsOnly(
  messages: ModelMessage[],
  declared: ReadonlySet<string>,
): ModelMessage[] {
  const unknown = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content)
      if (part.type === 'tool-call' && !declared.has(part.toolName)) unknown.add(part.toolCallId);
  }
  if (unknown.size === 0) return messages;
  const result: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      const content = message.content.map((part) =>
        part.type === 'tool-call' && unknown.has(part.toolCallId)
          ? {
              type: 'text' as const,
              text: `(I called "${part.toolName}" with ${JSON.stringify(part.input)}.)`,
            }
          : part,
      );
      result.push({ ...message, content });
    } else if (message.role === 'tool') {
      const kept = message.content.filter(
        (part) => !(part.type === 'tool-result' && unknown.has(part.toolCallId)),
      );
      const refusals = message.content.flatMap((part) =>
        part.type === 'tool-result' && unknown.has(part.toolCallId)
          ? [`The call to "${part.toolName}" was refused: ${refusalText(part.output)}`]
          : [],
      );
      if (kept.length) result.push({ ...message, content: kept });
      if (refusals.length) result.push({ role: 'user', content: refusals.join('\n') });
    } else result.push(message);
  }
  return result;
}

/**
 * Whether a model's provider refuses a history holding calls to tools the request does not declare:
 * Gemini does. Elsewhere the refusal stays a tool result, the shape models are trained to read.
 */
export function needsDeclaredCalls(modelRef: string): boolean {
  return modelRef.startsWith('google:') || modelRef.startsWith('vertex:');
}

function refusalText(output: unknown): string {
  const value = (output as { value?: unknown } | undefined)?.value;
  if (typeof value === 'string') return value;
  return value === undefined ? 'no such tool' : JSON.stringify(value);
}
