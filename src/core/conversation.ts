import type { ModelMessage } from 'ai';
import { type ContextPolicy, contextMessageCount } from './agent-definition.ts';

/**
 * The part of a parent's conversation a child may see under its context policy: nothing (`isolated`),
 * the last N user/assistant messages, or all of them. Tool calls and results are dropped, because a
 * child has none of the parent's tools to pair them with; only what was said carries over. `fork` is the
 * exception: the whole conversation as the parent's model saw it up to the step that delegates, its tool
 * calls and results included; the child's requests also carry the parent's instructions and tools, so
 * they begin as the parent's did (see fork-context.ts).
 */
export function messagesForChild(parentConversation: ModelMessage[], policy: ContextPolicy): ModelMessage[] {
  // As it was sent, tool calls and results too: a forked child's requests begin with it (fork-context.ts).
  if (policy === 'fork')
    return structuredClone(parentConversation.filter((message) => message.role !== 'system'));
  const count = contextMessageCount(policy);
  if (count === 0) return [];
  const spoken = parentConversation.flatMap(asSpokenMessage);
  return count === null ? spoken : spoken.slice(-count);
}

function asSpokenMessage(message: ModelMessage): ModelMessage[] {
  if (message.role !== 'user' && message.role !== 'assistant') return [];
  const text =
    typeof message.content === 'string'
      ? message.content
      : message.content
          .map((part) => (part.type === 'text' ? part.text : ''))
          .join('')
          .trim();
  if (!text) return [];
  return [{ role: message.role, content: text }];
}
