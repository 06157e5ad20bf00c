import type { RunView } from '../../core/run-view.ts';
import type { RunPartData, RunToolCallView } from './protocol.ts';

/**
 * Longest a tool output is kept in a stored answer, as JSON characters. The run tree keeps every output
 * whole (`GET /api/runs/:id`, `cadre runs show --verbose`); a session message only shows what the page
 * shows in a card, so an MCP server returning megabytes per call does not make every read of the session
 * carry them again.
 */
export const STORED_OUTPUT_CHARS = 4000;

/** A tool output as a stored answer keeps it: whole when small, else its head and how long it was. */
export function storedOutput(output: unknown, limit = STORED_OUTPUT_CHARS): unknown {
  if (output === undefined) return undefined;
  if (typeof output === 'string') {
    return output.length <= limit
      ? output
      : `${output.slice(0, limit)}… [cut: ${output.length} characters in all; the run tree has the whole output]`;
  }
  const json = JSON.stringify(output) ?? '';
  if (json.length <= limit) return output;
  return `${json.slice(0, limit)}… [cut: ${json.length} characters of JSON in all; the run tree has the whole output]`;
}

/**
 * A run's `data-run` part on the wire, rendered from its view: its header while it runs; at its end also
 * its outcome. A summary that is the end of the text the run streamed is left out (`summaryChars` says how
 * long it is), since the client has that text already (see protocol.ts). Cost is the app's to add.
 */
export function runPart(run: RunView): RunPartData {
  const header: RunPartData = {
    runId: run.runId,
    parentRunId: run.parentRunId,
    rootRunId: run.rootRunId,
    depth: run.depth,
    agent: run.agent,
    task: run.task,
    model: run.model,
    status: run.status,
    startedAt: run.startedAt,
    ...(run.parentToolCallId ? { parentToolCallId: run.parentToolCallId } : {}),
    ...(run.forked ? { forked: run.forked } : {}),
    ...(run.background ? { background: run.background } : {}),
    ...(run.continues ? { continues: run.continues } : {}),
  };
  if (run.endedAt === undefined) return header;
  const summary = run.summary ?? '';
  const fromText = summary.length > 0 && run.text.trimEnd().endsWith(summary);
  return {
    ...header,
    ...(run.error !== undefined ? { error: run.error } : {}),
    endedAt: run.endedAt,
    ...(fromText ? { summaryChars: summary.length } : { summary }),
    ...(run.data !== undefined ? { data: run.data } : {}),
    ...(run.sources ? { sources: run.sources } : {}),
    ...(run.stoppedBy ? { stoppedBy: run.stoppedBy } : {}),
    ...(run.usage ? { usage: run.usage } : {}),
    ...(run.subtreeUsage ? { subtreeUsage: run.subtreeUsage } : {}),
  };
}

/**
 * A run's `data-run` part as a stored answer keeps it: the wire's last part (`wire`: its header and how it
 * ended, with the cost the app added) with the summary whole and the run's history from its view (text,
 * tool calls with their outputs cut to `STORED_OUTPUT_CHARS`, plan, steps), so a reload shows what was
 * seen live.
 */
export function storedRunPart(wire: RunPartData, run: RunView | undefined): RunPartData {
  const { summaryChars, ...data } = wire;
  const text = run?.text ?? '';
  return {
    ...data,
    ...(summaryChars !== undefined ? { summary: text.trimEnd().slice(-summaryChars) } : {}),
    text,
    toolCalls: run ? run.toolCalls.map(storedCall) : [],
    ...(run?.plan ? { plan: run.plan } : {}),
    ...(run?.messages ? { messages: run.messages } : {}),
    ...(run?.steps ? { steps: run.steps } : {}),
  };
}

/** A tool call as a stored answer keeps it: its output cut (the run tree has it whole), no diff (in it). */
function storedCall(call: RunView['toolCalls'][number]): RunToolCallView {
  const { diff: _diff, ...kept } = call;
  return kept.output === undefined ? kept : { ...kept, output: storedOutput(kept.output) };
}
