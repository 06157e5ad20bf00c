import type { RunState } from './protocol.ts';

/** What each status is called on screen (also the icon's accessible name). */
export const STATUS_LABELS: Record<RunState, string> = {
  running: 'running',
  ok: 'done',
  partial: 'partial',
  error: 'error',
  cancelled: 'cancelled',
  max_turns: 'stopped: turn limit',
  timeout: 'stopped: time limit',
  budget: 'stopped: token budget',
  interrupted: 'interrupted',
};

const GLYPHS: Record<Exclude<RunState, 'running'>, string> = {
  ok: '✓',
  partial: '◐',
  error: '✕',
  cancelled: '■',
  max_turns: '↻',
  timeout: '⏱',
  budget: '¤',
  interrupted: '‖',
};

/** A run's status as an icon: a spinner while running, a glyph in the status colour once ended. */
export function StatusIcon({ status }: { status: RunState }) {
  const label = STATUS_LABELS[status];
  if (status === 'running') return <span className="status-icon spinner" role="img" aria-label={label} />;
  return (
    <span className={`status-icon status-${status}`} role="img" aria-label={label} title={label}>
      {GLYPHS[status]}
    </span>
  );
}
