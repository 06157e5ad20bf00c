import type { MessageVersion } from '../api/resources.ts';
import type { CadreMessage } from '../runs/protocol.ts';

export type { MessageVersion };

/** Which version is shown after each message that has earlier versions (key: that message's id, '' for the start). */
export type ChosenVersions = Readonly<Record<string, number>>;

/** A message as the page shows it: whether it is of the current branch, and the version switch on an answer. */
export interface ShownMessage {
  message: CadreMessage;
  /** Of the current branch (a new question follows it); false for an earlier version's messages. */
  current: boolean;
  /** On the answer after a question that has earlier versions: which of how many is shown (0-based). */
  versions?: { key: string; at: number; count: number; versionId?: string };
}

/** Where a version goes in `ChosenVersions`: the id of the message it follows, or '' for the start. */
export const versionKey = (afterId: string | null): string => afterId ?? '';

/**
 * The messages shown: the current branch, except where an earlier version is chosen after a message;
 * from there on, that version's messages (which may have versions of their own further on). At each
 * question with earlier versions, the alternatives are those versions, oldest first, then the current one.
 */
export function shownMessages(
  current: readonly CadreMessage[],
  versions: readonly MessageVersion[],
  chosen: ChosenVersions,
): ShownMessage[] {
  const shown: ShownMessage[] = [];
  let branch = current;
  let isCurrent = true;
  let pending: ShownMessage['versions'];
  for (let index = 0; index < branch.length; index++) {
    if (branch[index]!.role === 'user') {
      const afterId = shown.at(-1)?.message.id ?? null;
      const earlier = versions.filter((version) => version.afterId === afterId && version.messages.length);
      if (earlier.length) {
        const key = versionKey(afterId);
        const count = earlier.length + 1;
        // A version chosen in another branch may be past this one's count: the current one is shown.
        const at = Math.min(chosen[key] ?? count - 1, count - 1);
        pending = { key, at, count, ...(at < count - 1 ? { versionId: earlier[at]!.id } : {}) };
        if (at < count - 1) {
          branch = earlier[at]!.messages;
          isCurrent = false;
          index = 0;
        }
      } else pending = undefined;
    }
    const message = branch[index]!;
    const versionsHere = message.role === 'assistant' ? pending : undefined;
    shown.push({ message, current: isCurrent, ...(versionsHere ? { versions: versionsHere } : {}) });
    if (message.role === 'assistant') pending = undefined;
  }
  return shown;
}

/** The replaced part of the conversation when the question at `index` is sent again, as a version. */
export function replacedVersion(
  messages: readonly CadreMessage[],
  index: number,
): MessageVersion | undefined {
  const tail = messages.slice(index);
  // A question whose answer never came (its request failed) leaves nothing worth keeping.
  if (!tail.some((message) => message.role === 'assistant')) return undefined;
  return { id: `local-${crypto.randomUUID()}`, afterId: messages[index - 1]?.id ?? null, messages: tail };
}

/** The earlier versions shown, top to bottom: restored in this order, they make the shown branch current. */
export function shownVersionIds(shown: readonly ShownMessage[]): string[] {
  return shown.flatMap(({ versions }) => (versions?.versionId ? [versions.versionId] : []));
}
