/**
 * What a sub-agent run was given besides its task (e.g. `analyze_document`'s `document_id`): read from the
 * parent's tool call that started it (or the message's tool part, for the main agent's own calls), since
 * the run's own header carries only the task.
 */
import { type RunStore, useRun } from './run-store.ts';

/** A delegation call's input without its task: the other inputs it gave the run. */
export function inputsOf(input: unknown): Record<string, unknown> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return {};
  const { task: _task, ...others } = input as Record<string, unknown>;
  return others;
}

export function useRunInputs(
  store: RunStore,
  runId: string,
  /** The call's input when the caller has it (the main agent's calls are tool parts of the message). */
  callInput?: unknown,
): Record<string, unknown> {
  const run = useRun(store, runId);
  const parent = useRun(store, run?.parentRunId ?? '');
  const call = parent?.toolCalls.find((each) => each.id === run?.parentToolCallId);
  return inputsOf(callInput ?? call?.input);
}
