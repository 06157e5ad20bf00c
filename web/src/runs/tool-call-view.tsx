import { useState } from 'react';
import { formatDuration, formatValue, truncate } from '../format.ts';
import type { RunToolCallView } from './protocol.ts';

/** Past this many characters an input or result shows folded, with a button to see all of it. */
const LONG = 1200;

function FoldedText({ label, text }: { label: string; text: string }) {
  const [full, setFull] = useState(false);
  const long = text.length > LONG;
  return (
    <div className="tool-io">
      <div className="tool-io-label">{label}</div>
      <pre>{long && !full ? `${text.slice(0, LONG)}…` : text}</pre>
      {long && (
        <button type="button" className="link-button" onClick={() => setFull(!full)}>
          {full
            ? `Show less of the ${label.toLowerCase()}`
            : `Show all ${text.length.toLocaleString()} characters`}
        </button>
      )}
    </div>
  );
}

/** One tool call: a line with its name, input and outcome; opened, the full input and result. */
export function ToolCallView({ call }: { call: RunToolCallView }) {
  const state = call.ok === undefined ? 'running' : call.ok ? 'ok' : 'error';
  const input = formatValue(call.input);
  const result = call.refused ?? call.error ?? formatValue(call.output);
  return (
    <details className={`tool-call tool-${state}`}>
      <summary>
        <span className="tool-state" role="img" aria-label={state === 'ok' ? 'succeeded' : state}>
          {state === 'running' ? <span className="spinner small" /> : state === 'ok' ? '✓' : '✕'}
        </span>
        <span className="tool-name">{call.name}</span>
        <span className="tool-input-preview">
          {truncate(typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {}), 80)}
        </span>
        {call.ms !== undefined && <span className="tool-ms">{formatDuration(call.ms)}</span>}
        {(call.deduplicated || call.reused) && (
          <span
            className="badge"
            title={call.reused ? `from run ${call.reused.runId}, ${call.reused.finishedAt}` : undefined}
          >
            reused
          </span>
        )}
        {call.approval && call.approval.approved === undefined && (
          <span className="badge">waiting for approval</span>
        )}
        {call.approval?.approved === false && <span className="badge">denied</span>}
        {call.approval?.approved === true && <span className="badge">allowed by you</span>}
      </summary>
      <div className="tool-body">
        <FoldedText label="Input" text={input} />
        {call.ok !== undefined && (
          <FoldedText label={call.refused ? 'Refused' : call.ok ? 'Result' : 'Error'} text={result} />
        )}
      </div>
    </details>
  );
}
