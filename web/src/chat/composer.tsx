import { type FormEvent, type KeyboardEvent, useLayoutEffect, useRef, useState } from 'react';
import { PaperclipIcon } from '../icons.tsx';

/** The tallest the message box grows (about ten lines); longer text scrolls inside it. */
const MAX_HEIGHT_PX = 240;

/**
 * The message box: Enter sends, Shift+Enter starts a new line, Esc (or the Stop button) stops the answer
 * being written, with everything it started. While an answer is being written, Enter queues the message:
 * it is sent when the answer ends (`onSend` decides); but while the main agent has answered and waits only
 * for its background runs (`talking`), the message goes to it at once.
 */
export function Composer({
  busy,
  talking = false,
  disabled,
  onSend,
  onStop,
  onAttach,
}: {
  busy: boolean;
  /** The main agent has answered and waits only for its background runs: a message reaches it now. */
  talking?: boolean;
  disabled?: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
  /** Files chosen with the attach button: added to the person's documents. */
  onAttach?: (files: File[]) => void;
}) {
  const picker = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  // The box grows with the text, wrapped lines included, up to MAX_HEIGHT_PX; past it, it scrolls.
  // biome-ignore lint/correctness/useExhaustiveDependencies: measured again whenever the text changes
  useLayoutEffect(() => {
    const element = area.current;
    if (!element) return;
    element.style.height = 'auto';
    element.style.height = `${Math.min(element.scrollHeight + 2, MAX_HEIGHT_PX)}px`;
  }, [text]);
  const send = () => {
    const trimmed = text.trim();
    if (!trimmed || disabled) return;
    onSend(trimmed);
    setText('');
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    } else if (event.key === 'Escape' && busy) {
      event.preventDefault();
      onStop();
    }
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (busy) onStop();
    else send();
  };
  return (
    <form className="composer" onSubmit={onSubmit}>
      {onAttach && (
        <>
          <button
            type="button"
            className="button attach-button"
            aria-label="Attach a document"
            title="Add a document (PDF, Markdown, HTML, CSV, Excel) for the agents to read"
            disabled={disabled}
            onClick={() => picker.current?.click()}
          >
            <PaperclipIcon />
          </button>
          <input
            ref={picker}
            type="file"
            multiple
            hidden
            aria-label="Choose documents to attach"
            onChange={(event) => {
              const files = [...(event.target.files ?? [])];
              event.target.value = '';
              if (files.length) onAttach(files);
            }}
          />
        </>
      )}
      <textarea
        ref={area}
        aria-label="Message"
        placeholder={
          disabled
            ? 'Set a model first (see above)'
            : talking
              ? 'Tell the main agent…'
              : busy
                ? 'Ask a follow-up…'
                : 'Ask anything…'
        }
        title={
          talking
            ? 'Sent to the main agent now: it answers while the background runs go on. Esc stops the answer.'
            : busy
              ? 'A follow-up is sent when this answer ends. Esc stops the answer.'
              : 'Enter sends, Shift+Enter starts a new line, Esc stops the answer'
        }
        rows={1}
        value={text}
        disabled={disabled}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
        // biome-ignore lint/a11y/noAutofocus: the message box is the page's purpose
        autoFocus
      />
      {busy ? (
        <button type="submit" className="button stop" aria-label="Stop" title="Stop (Esc)">
          <span className="stop-square" aria-hidden="true" /> Stop
        </button>
      ) : (
        <button type="submit" className="button primary" disabled={disabled || !text.trim()}>
          Send
        </button>
      )}
    </form>
  );
}
