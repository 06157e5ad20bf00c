/** Small formatters shared by the views. */

/** "820 ms", "4.2 s", "3 min 05 s". */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.max(0, Math.round(milliseconds))} ms`;
  const seconds = milliseconds / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${String(Math.floor(seconds % 60)).padStart(2, '0')} s`;
}

/** "950 tokens", "12.4k tokens". */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return `${tokens} tokens`;
  return `${(tokens / 1000).toFixed(tokens < 10_000 ? 1 : 0)}k tokens`;
}

/** "512 B", "34 KB", "2.1 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A date as "14:05" today, else "3 Nov" (or with the year when not this year). */
export function formatDate(value: number | string | undefined): string {
  if (value === undefined) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const now = new Date();
  if (date.toDateString() === now.toDateString())
    return date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return date.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(date.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }),
  });
}

/** Cuts text to `length` characters on one line, with an ellipsis. */
export function truncate(text: string, length: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= length ? line : `${line.slice(0, length - 1)}…`;
}

/** JSON for display: strings as they are, everything else pretty-printed. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** What something cost: "$0.0018", "€12.40", "≥ $0.0020" (a partial cost is a lower bound). */
export function formatCost(cost: { amount: number; currency: string; partial?: boolean }): string {
  const digits =
    cost.amount >= 1 || cost.amount === 0
      ? { minimumFractionDigits: 2, maximumFractionDigits: 2 }
      : { maximumSignificantDigits: 2 };
  let text: string;
  try {
    text = new Intl.NumberFormat(undefined, { style: 'currency', currency: cost.currency, ...digits }).format(
      cost.amount,
    );
  } catch {
    text = `${cost.amount} ${cost.currency}`;
  }
  return cost.partial ? `≥ ${text}` : text;
}

/** What a partial cost leaves out, for its tooltip. */
export const PARTIAL_COST_NOTE = 'Some of these tokens came from a model without a configured price.';
