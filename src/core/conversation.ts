import type { ModelMessage } from 'ai';
import { type ContextPolicy, contextMessageCount } from './agent-definition.ts';

/**
 * The part of a parent's conversation a child may see under its context policy: nothing (`isolated`),
 * the last N user/assistant messages, or all of them. Tool calls and results are dropped, because a
 * child has none of the parent's tools to pair them with; only what was said carries over.
 */
export function messagesForChild(parentConversation: ModelMessage[], policy: ContextPolicy): ModelMessage[] {
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
