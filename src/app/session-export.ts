/**
 * A chat written out for a person to keep: Markdown that reads well in any viewer (the questions, the
 * answers, and under each answer the runs that made it, nested as they ran, with their tools, usage and
 * cost). The JSON export (GET /api/sessions/:id/export?format=json) is the session as the API gives it,
 * with its run trees.
 */
import type { Usage } from '../core/usage.ts';
import type { Session, StoredMessage } from '../store/store.ts';
import type { Cost, PricedRunTree } from './pricing.ts';

/** The formats a session exports to. */
export const EXPORT_FORMATS = ['md', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A session with the run tree of each of its answers (by the answer's root run id). */
export interface SessionWithRuns {
  session: Session;
  runs: PricedRunTree[];
}

/** The root run id of a stored answer: its own field, else its metadata's. */
export function answerRunId(message: StoredMessage): string | undefined {
  if (message.runId) return message.runId;
  const metadata = message.metadata as { rootRunId?: unknown } | undefined;
  return typeof metadata?.rootRunId === 'string' ? metadata.rootRunId : undefined;
}

/** A file name for the export: the title's words, safe on every system, and the format's extension. */
export function exportFileName(title: string, format: ExportFormat): string {
  const stem = title
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/[\s_]+/g, '-')
    .slice(0, 60)
    .replace(/-+$/, '')
    .toLowerCase();
  return `${stem || 'chat'}.${format}`;
}

/** The session as Markdown. `now` is when it was exported (injected for tests). */
export function sessionMarkdown({ session, runs }: SessionWithRuns, now = new Date()): string {
  const byId = new Map(runs.map((tree) => [tree.id, tree]));
  const lines: string[] = [`# ${oneLine(session.title) || 'Untitled chat'}`, ''];
  lines.push(`Exported from Cadre on ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC.`, '');
  for (const message of session.messages) {
    if (message.role === 'user') {
      lines.push('## You', '', message.content.trim(), '');
      continue;
    }
    lines.push('## Cadre', '', message.content.trim() || '_(no answer text)_', '');
    const runId = answerRunId(message);
    const tree = runId ? byId.get(runId) : undefined;
    if (!tree) continue;
    const figures = [statusWord(tree.status), usageText(tree.subtreeUsage, tree.subtreeCost)];
    lines.push(`_${figures.join(' · ')}_`, '');
    if (tree.children.length === 0 && tree.toolCalls.length === 0) continue;
    lines.push('<details><summary>How this answer was made</summary>', '');
    writeRun(lines, tree, 0);
    lines.push('', '</details>', '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** One run as a bullet (agent, status, task, usage), its tool calls and children nested under it. */
function writeRun(lines: string[], run: PricedRunTree, depth: number): void {
  const indent = '  '.repeat(depth);
  const time = run.endedAt ? ` · ${seconds(Date.parse(run.endedAt) - Date.parse(run.startedAt))}` : '';
  lines.push(
    `${indent}- **${run.agent}** (${statusWord(run.status)}${time} · ${usageText(run.usage, run.cost)}): ${oneLine(run.task)}`,
  );
  const inner = `${indent}  `;
  // A delegation's call is its child run, written below as a run of its own.
  const delegated = new Set(run.children.map((child) => child.agent));
  for (const call of run.toolCalls) {
    if (delegated.has(call.name)) continue;
    const outcome = call.refused ? 'refused' : call.ok === false ? 'failed' : call.ok ? 'ok' : 'no result';
    lines.push(`${inner}- \`${call.name}\` ${code(JSON.stringify(call.input ?? {}), 200)} → ${outcome}`);
  }
  for (const child of run.children) writeRun(lines, child, depth + 1);
  if (depth > 0 && run.summary.trim()) lines.push(`${inner}- Result: ${oneLine(run.summary, 400)}`);
  if (run.error) lines.push(`${inner}- Error: ${oneLine(run.error, 400)}`);
}

function usageText(usage: Usage, cost: Cost | undefined): string {
  const tokens = `${usage.totalTokens.toLocaleString('en-US')} tokens`;
  return cost ? `${tokens} · ${formatCost(cost)}` : tokens;
}

/** "0.0018 USD", "12.40 USD", "≥ 1.20 EUR" (a partial cost is a lower bound): two significant digits below 1. */
export function formatCost(cost: Cost): string {
  const { amount } = cost;
  const decimals = amount >= 1 || amount <= 0 ? 2 : Math.min(10, 1 - Math.floor(Math.log10(amount)));
  const shown = amount.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1');
  return `${cost.partial ? '≥ ' : ''}${shown} ${cost.currency}`;
}

function statusWord(status: string): string {
  return status === 'ok' ? 'done' : status.replace('_', ' ');
}

function seconds(milliseconds: number): string {
  return milliseconds < 1000 ? `${Math.max(0, milliseconds)} ms` : `${(milliseconds / 1000).toFixed(1)} s`;
}

function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** Inline code that survives backticks in its text. */
function code(text: string, max: number): string {
  const shown = oneLine(text, max);
  const fence = shown.includes('`') ? '``' : '`';
  return `${fence}${shown.startsWith('`') ? ' ' : ''}${shown}${shown.endsWith('`') ? ' ' : ''}${fence}`;
}
