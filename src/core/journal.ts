import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { PartMapper } from './map-stream.ts';

/**
 * A tree's run journal: every completed model step and tool result, committed as it happens, so that
 * an interrupted tree can be continued without redoing committed work. Entries are keyed by where they
 * sit in the tree (`runKey`: the root is `r`, a child `r/<toolCallId>`…), not by run id, so a resumed
 * attempt, whose runs get new ids, finds what the first attempt did. A replayed model step gives back the
 * same tool call ids, so the keys below it match too.
 */
export interface TreeJournal {
  /** What an earlier attempt committed, or undefined. */
  get(runKey: string, kind: JournalKind, key: string): unknown;
  /**
   * Commits one entry: durable when it returns (or when its promise resolves), or with `soon` by the next
   * model request at the latest (the runtime's `beforeModelRequest`), when nothing acts on it before then.
   */
  put(
    runKey: string,
    kind: JournalKind,
    key: string,
    body: unknown,
    when?: 'now' | 'soon',
  ): void | Promise<void>;
}

/**
 * `approval`: a call that started waiting for a person (its id and deadline), so a resume waits on.
 * `tool-start`: a call that started something which outlives its process (bash's process group), secured
 * before it runs, so a resume knows it may have run (see interrupted-calls.ts).
 * `message`: the messages a person sent to a run that joined its conversation before a model step (keyed
 * by the step), so a resume adds them at the same step again, once.
 */
export type JournalKind = 'model-step' | 'tool-result' | 'approval' | 'tool-start' | 'message';

/** A committed tool result: the output, or the error the model was shown. */
export interface JournaledToolResult {
  ok: boolean;
  output?: unknown;
  error?: string;
}

/** The journal key of a child run: its parent's key and the tool call that started it. */
export function childJournalKey(parentKey: string, toolCallId: string): string {
  return `${parentKey}/${toolCallId}`;
}

/** The model step an earlier attempt committed at this place, as a stream, or undefined. */
export function recordedStep(
  journal: TreeJournal,
  runKey: string,
  index: string,
): ReadableStream<LanguageModelV4StreamPart> | undefined {
  const recorded = journal.get(runKey, 'model-step', index) as { parts: unknown[] } | undefined;
  return recorded ? replay(recorded.parts) : undefined;
}

/**
 * Commits one model call's answer when its `finish` part arrives, holding its tool calls (and what follows
 * them) until the commit is done, so no tool runs for a step the journal does not have.
 */
export function journalMapper(
  journal: TreeJournal,
  runKey: string,
  index: string,
): PartMapper<LanguageModelV4StreamPart> {
  const parts: LanguageModelV4StreamPart[] = [];
  const held: LanguageModelV4StreamPart[] = [];
  let failed = false;
  const release = async (
    finish: LanguageModelV4StreamPart,
    enqueue: (part: LanguageModelV4StreamPart) => void,
  ) => {
    // A step that calls tools is durable before they run; a final answer only before anything uses it.
    if (!failed)
      await journal.put(
        runKey,
        'model-step',
        index,
        { parts: parts.map(serialisable) },
        held.length ? 'now' : 'soon',
      );
    for (const waiting of held.splice(0)) enqueue(waiting);
    enqueue(finish);
  };
  return {
    transform(part, enqueue) {
      if (part.type === 'error') failed = true;
      else if (part.type !== 'raw') parts.push(part);
      // Only the step's end waits (for the commit); every other part passes at once.
      if (part.type === 'finish') return release(part, enqueue);
      if (held.length || part.type === 'tool-call') held.push(part);
      else enqueue(part);
    },
    flush(enqueue) {
      for (const waiting of held.splice(0)) enqueue(waiting);
    },
  };
}

function serialisable(part: LanguageModelV4StreamPart): unknown {
  if (part.type === 'response-metadata' && part.timestamp instanceof Date) {
    return { ...part, timestamp: part.timestamp.toISOString() };
  }
  return part;
}

function replay(parts: unknown[]): ReadableStream<LanguageModelV4StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts as LanguageModelV4StreamPart[]) {
        if (part.type === 'response-metadata' && typeof part.timestamp === 'string') {
          controller.enqueue({ ...part, timestamp: new Date(part.timestamp) });
        } else {
          controller.enqueue(part);
        }
      }
      controller.close();
    },
  });
}
