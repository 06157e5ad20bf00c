import { useState } from 'react';
import { formatDuration, formatValue } from '../format.ts';
import { callState, inputPreview, plainValue, resultPreview } from './call-words.ts';
import { InputFields } from './input-fields.tsx';
import type { RunToolCallView } from './protocol.ts';
import { CallIcon } from './status-icon.tsx';

/** Past this many characters a result shows folded, with a button to see all of it. */
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

/**
 * One tool call: a line with its name, its input as plain text, its state in words (and a short result);
 * opened, the full input field by field and the full result.
 */
export function ToolCallView({ call }: { call: RunToolCallView }) {
  const state = callState(call);
  const shortResult = state.kind === 'ok' || state.kind === 'reused' ? resultPreview(call.output) : undefined;
  const result =
    call.refused ??
    call.error ??
    (typeof call.output === 'number' ? plainValue(call.output) : formatValue(call.output));
  return (
    <details
      className={`tool-call tool-${state.kind === 'ok' || state.kind === 'reused' ? 'ok' : state.kind}`}
    >
      <summary>
        <CallIcon kind={state.kind} label={state.kind === 'ok' ? 'done' : state.words || state.kind} />
        <span className="tool-name">{call.name}</span>
        <span className="tool-input-preview">{inputPreview(call.input)}</span>
        {shortResult !== undefined && <span className="tool-result-preview">→ {shortResult}</span>}
        {call.ms !== undefined && call.ms > 0 && <span className="tool-ms">{formatDuration(call.ms)}</span>}
        {state.words && <span className={`tool-words tool-words-${state.kind}`}>{state.words}</span>}
      </summary>
      <div className="tool-body">
        <div className="tool-io">
          <div className="tool-io-label">Input</div>
          <InputFields input={call.input} label={`${call.name} input`} />
        </div>
        {call.ok !== undefined && (
          <FoldedText label={call.refused ? 'Refused' : call.ok ? 'Result' : 'Error'} text={result} />
        )}
      </div>
    </details>
  );
}
