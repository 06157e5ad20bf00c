import type { CadreEvent, RunTree } from '../core/index.ts';
import { sourcesReport } from './sources-report.ts';
import { printableLine, withoutControls } from './terminal-text.ts';
import { renderTree } from './tree-view.ts';

/** Characters of a tool's input, output or a sub-agent's summary shown per line unless `--verbose`. */
const TRIMMED = 200;

/**
 * A stored run tree for `cadre runs show`: the tree, then under each run its tool calls with their input
 * and output, and each sub-agent's summary; trimmed to a line each, or whole with `verbose`. The root's
 * answer follows the tree.
 */
export function runReport(tree: RunTree, events: CadreEvent[], options: { verbose: boolean }): string {
  const outputs = new Map<string, { output?: unknown; error?: string }>();
  for (const event of events)
    if (event.type === 'tool-result')
      outputs.set(`${event.runId}\u0000${event.toolCallId}`, { output: event.output, error: event.error });
  const text = (value: unknown, indent: string): string[] => {
    const raw =
      typeof value === 'string' ? value : (JSON.stringify(value, null, options.verbose ? 2 : 0) ?? '');
    if (!options.verbose) {
      const flat = printableLine(raw);
      return [`${indent}${flat.length > TRIMMED ? `${flat.slice(0, TRIMMED - 1)}…` : flat}`];
    }
    return withoutControls(raw)
      .split('\n')
      .map((line) => `${indent}${line}`);
  };
  const details = (node: RunTree, indent: string): string[] => {
    const lines: string[] = [];
    // How a person steered it: a follow-up of which run, what they told it (and before which step).
    if (node.continues) lines.push(...text(`continues ${node.continues}`, indent));
    if (node.background)
      lines.push(
        ...text(
          node.status === 'running'
            ? 'running in the background; its parent went on, and gets its result when it ends'
            : 'ran in the background; its result went to its parent as a message',
          indent,
        ),
      );
    for (const message of node.messages ?? [])
      lines.push(
        ...text(
          message.background
            ? `background result of ${message.background.agent} ${message.background.runId} (${message.background.status}) joined before step ${message.step + 1}`
            : `you said (before step ${message.step + 1}): ${message.text}`,
          indent,
        ),
      );
    for (const call of node.toolCalls) {
      if (node.children.some((child) => child.agent === call.name)) continue;
      const mark = call.ok === null ? '…' : call.ok ? '✓' : '✗';
      const ms = call.ms === null ? '' : ` ${call.ms}ms`;
      lines.push(...text(`→ ${call.name} ${JSON.stringify(call.input)} ${mark}${ms}`, indent));
      const result = outputs.get(`${node.id}\u0000${call.id}`);
      const shown = call.refused ?? result?.error ?? call.error ?? result?.output;
      if (shown !== undefined) lines.push(...text(shown, `${indent}    `));
    }
    if (node.stoppedBy === 'person')
      lines.push(...text('stopped by you; its parent went on with its work', indent));
    if (node.parentId !== null && node.summary) lines.push(...text(`summary: ${node.summary}`, indent));
    if (node.parentId !== null) lines.push(...sourcesReport(node.sources, indent));
    return lines;
  };
  const ended = tree.endedAt ? Date.parse(tree.endedAt) : Date.now();
  const width = options.verbose ? Number.POSITIVE_INFINITY : 160;
  const answerSources = sourcesReport(tree.sources);
  const listed = answerSources.length ? `\n${answerSources.join('\n')}\n` : '';
  return `${renderTree(tree, ended, width, { details }).join('\n')}\n\n${withoutControls(tree.summary)}\n${listed}`;
}
