import { describeError } from './errors.ts';
import type { RunFrame } from './run-frame.ts';
import type { CadreTool, ToolContext } from './tool.ts';

/**
 * Calls an interrupted attempt had started and never finished. A tool whose work outlives the process
 * that started it (bash: its process group runs on after a SIGKILL) records each start in the tree's
 * journal before the work begins (`ToolContext.recordStart`). A resumed attempt that reaches the same call
 * without a result finds that record: the call may have run, in part or whole, so it is not run again
 * without asking, and the person is told why (`ApprovalRequest.warning`).
 *
 * Each run of one call has its own journal keys: the first its tool call id, the n-th `<id>#<n>` (for its
 * start and for its approval), so a second start after a resume is recorded beside the first and a
 * question asked again is not answered by the earlier decision.
 */
export interface InterruptedStart {
  /** What the person is told before deciding whether to run the call again. */
  warning: string;
  /** Which run of the call this would be (2 after one interrupted start). */
  run: number;
}

/** The journal key of a call's n-th run (its start record and its approval). */
export function callRunKey(toolCallId: string, run: number): string {
  return run === 1 ? toolCallId : `${toolCallId}#${run}`;
}

const GENERAL =
  'This call was started before the run was interrupted (the process running it stopped), so it may ' +
  'have run already, in part or whole; running it again may do its work twice.';

/**
 * The latest start an earlier attempt recorded for this call, dealt with by its tool (bash stops what is
 * left of it) and described for the person; undefined when no attempt started it.
 */
export async function interruptedStart(
  frame: RunFrame,
  toolCallId: string,
  tool: Pick<CadreTool, 'interruptedStart'>,
  context: ToolContext,
): Promise<InterruptedStart | undefined> {
  const journal = frame.tree.record.journal;
  if (!journal) return undefined;
  let runs = 0;
  let started: unknown;
  for (;;) {
    const found = journal.get(frame.journalKey, 'tool-start', callRunKey(toolCallId, runs + 1));
    if (found === undefined) break;
    started = found;
    runs++;
  }
  if (!runs) return undefined;
  let said: string | undefined;
  if (tool.interruptedStart) {
    said = await tool
      .interruptedStart(started as Record<string, unknown>, context)
      .catch((error: unknown) => `What became of it could not be checked: ${describeError(error)}.`);
  }
  return { warning: said ? `${GENERAL} ${said}` : GENERAL, run: runs + 1 };
}

/** `ToolContext.recordStart` for the `run`-th run of a call: secured in the journal when it resolves. */
export function startRecorder(frame: RunFrame, toolCallId: string, run: number): ToolContext['recordStart'] {
  const journal = frame.tree.record.journal;
  if (!journal) return undefined;
  return async (details) => {
    await journal.put(frame.journalKey, 'tool-start', callRunKey(toolCallId, run), details, 'now');
  };
}
