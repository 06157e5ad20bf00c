/**
 * Every state of a tool call said in words, as a person reads it: queued, running, waiting for your
 * approval, allowed by you, refused because…, reused from an earlier answer, failed: …; and a call's input
 * and result as short plain text instead of JSON.
 */
import { truncate } from '../format.ts';
import type { RunToolCallView } from './protocol.ts';

export type CallKind = 'queued' | 'running' | 'waiting' | 'ok' | 'reused' | 'refused' | 'denied' | 'error';

export interface CallState {
  kind: CallKind;
  /** The state in words ("refused because at most 4 delegations per step…"); empty for a plain success. */
  words: string;
}

/** Who decided an approval, as the sentence says it ("allowed by you", "denied by a flag"). */
function decidedBy(by: string | undefined): string {
  switch (by) {
    case 'person':
    case undefined:
      return 'by you';
    case 'flag':
      return 'by a command-line flag';
    case 'timeout':
      return 'because nobody answered in time';
    case 'cancelled':
      return 'because the answer was stopped';
    case 'none':
      return 'because nobody could be asked';
    default:
      return `by ${by}`;
  }
}

/** A refusal's reason as the end of "refused because …" (the core writes "refused: at most …"). */
export function refusalReason(reason: string): string {
  return reason.replace(/^refused:\s*/i, '');
}

/** The first line of an error, for the call's own line (the whole of it is in the call's body). */
function firstLine(text: string | undefined): string {
  return truncate((text ?? 'it failed').split('\n')[0] ?? '', 160);
}

/** "8:02 PM" for when a reused result's run finished. */
function finishedAt(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** A tool call's state, in words. */
export function callState(call: RunToolCallView): CallState {
  const approval = call.approval;
  if (call.refused) return { kind: 'refused', words: `refused because ${refusalReason(call.refused)}` };
  if (approval?.approved === false)
    return {
      kind: 'denied',
      words: `denied ${decidedBy(approval.by)}${approval.reason && approval.by !== 'person' ? `: ${approval.reason}` : ''}`,
    };
  const allowed = approval?.approved === true ? `allowed ${decidedBy(approval.by)}` : '';
  if (call.ok === undefined) {
    if (approval && approval.approved === undefined)
      return { kind: 'waiting', words: 'waiting for your approval' };
    return { kind: 'running', words: allowed ? `${allowed}, running…` : 'running…' };
  }
  if (call.reused)
    return {
      kind: 'reused',
      words: `reused from an earlier answer (finished ${finishedAt(call.reused.finishedAt)})`,
    };
  if (call.deduplicated)
    return { kind: 'reused', words: 'reused: the same request was made earlier in this answer' };
  if (!call.ok) return { kind: 'error', words: `failed: ${firstLine(call.error)}` };
  return { kind: 'ok', words: allowed };
}

/** A value as plain text: strings as they are, numbers in plain notation, the rest as compact JSON. */
export function plainValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return plainNumber(value);
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** 350826, not 3.50826e+5; very large or very small numbers keep their exponent. */
export function plainNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude >= 1e21 || magnitude < 1e-6)) return String(value);
  return value.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 12 });
}

/**
 * A call's input on one line: a lone text field as that text (a task, a query, a command), several as
 * "name: value · name: value".
 */
export function inputPreview(input: unknown): string {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return truncate(plainValue(input), 200);
  const entries = Object.entries(input as Record<string, unknown>).filter(([, value]) => value !== undefined);
  if (entries.length === 1 && typeof entries[0]![1] === 'string') return truncate(entries[0]![1], 200);
  return truncate(entries.map(([name, value]) => `${name}: ${plainValue(value)}`).join(' · '), 200);
}

/** A short result for the call's line ("→ 391"), when the result is short enough to read there. */
export function resultPreview(output: unknown): string | undefined {
  let value = output;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    value = record.summary ?? record.result ?? record.value ?? record.answer;
  }
  if (typeof value === 'number') return plainNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string' && value.trim()) return truncate(value, 120);
  return undefined;
}
