/**
 * Status glyphs drawn as SVG: font symbols such as ⏱ or ◐ are missing from some systems' fonts (Debian's
 * Chromium showed a box), a line drawing never is. Each glyph has its state as its accessible name.
 */
import type { ReactNode } from 'react';
import type { CallKind } from './call-words.ts';
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

const CHECK = <path d="M5 12.5l4.5 4.5L19 7.5" />;
const CROSS = <path d="M7 7l10 10M17 7L7 17" />;
const CLOCK = (
  <>
    <circle cx="12" cy="12" r="8.5" />
    <path d="M12 7.5V12l3 2" />
  </>
);

const RUN_GLYPHS: Record<Exclude<RunState, 'running'>, ReactNode> = {
  ok: CHECK,
  partial: (
    <>
      <circle cx="12" cy="12" r="8" />
      <path d="M12 4a8 8 0 0 1 0 16z" fill="currentColor" />
    </>
  ),
  error: CROSS,
  cancelled: <rect x="7" y="7" width="10" height="10" rx="1.5" fill="currentColor" />,
  max_turns: <path d="M19 12a7 7 0 1 1-2.1-5M19 4.5V9h-4.5" />,
  timeout: CLOCK,
  budget: (
    <>
      <circle cx="12" cy="12" r="8.5" />
      <path d="M14.5 9.5c-.5-.9-1.4-1.3-2.5-1.3-1.5 0-2.5.8-2.5 1.9 0 2.6 5 1.2 5 3.8 0 1.1-1 1.9-2.5 1.9-1.1 0-2.1-.5-2.6-1.4M12 6.5v1.7M12 15.8v1.7" />
    </>
  ),
  interrupted: <path d="M9 6.5v11M15 6.5v11" />,
};

const CALL_GLYPHS: Record<Exclude<CallKind, 'running'>, ReactNode> = {
  ok: CHECK,
  error: CROSS,
  queued: CLOCK,
  waiting: (
    <>
      <circle cx="12" cy="12" r="8.5" />
      <path d="M9.7 9.5a2.4 2.4 0 1 1 3.3 2.2c-.6.3-1 .9-1 1.6v.4M12 16.6v.2" />
    </>
  ),
  refused: (
    <>
      <circle cx="12" cy="12" r="8.5" />
      <path d="M6 6l12 12" />
    </>
  ),
  denied: (
    <>
      <circle cx="12" cy="12" r="8.5" />
      <path d="M6 6l12 12" />
    </>
  ),
  reused: <path d="M19 11a7 7 0 1 0-2 5M19 4.5V11h-6.5" />,
};

function Glyph({ className, label, children }: { className: string; label: string; children: ReactNode }) {
  return (
    <span className={className} role="img" aria-label={label} title={label}>
      <svg
        width="14"
        height="14"
        viewBox="0 0 24 24"
        fill="none"
        stroke="currentColor"
        strokeWidth="2.4"
        strokeLinecap="round"
        strokeLinejoin="round"
        aria-hidden="true"
      >
        {children}
      </svg>
    </span>
  );
}

/** A run's status as an icon: a spinner while running, a glyph in the status colour once ended. */
export function StatusIcon({ status }: { status: RunState }) {
  const label = STATUS_LABELS[status];
  if (status === 'running') return <span className="status-icon spinner" role="img" aria-label={label} />;
  return (
    <Glyph className={`status-icon status-${status}`} label={label}>
      {RUN_GLYPHS[status]}
    </Glyph>
  );
}

/** A tool call's state as an icon (the words beside it say the same, with the reason). */
export function CallIcon({ kind, label }: { kind: CallKind; label: string }) {
  if (kind === 'running')
    return (
      <span className="tool-state" role="img" aria-label={label}>
        <span className="spinner small" />
      </span>
    );
  return (
    <Glyph className={`tool-state tool-state-${kind}`} label={label}>
      {CALL_GLYPHS[kind]}
    </Glyph>
  );
}
