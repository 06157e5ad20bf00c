/**
 * A button that copies text and says so for a moment ("Copied"): in its label, and in a polite live
 * region, since not every screen reader reads out a focused button's new label. The Clipboard API exists only in secure contexts (a server reached over plain HTTP on a LAN is
 * not one): there the text is copied through a hidden text area instead.
 */
import { useEffect, useRef, useState } from 'react';
import { CheckIcon, CopyIcon } from '../icons.tsx';

const SHOWN_MS = 1600;

/** Puts `text` on the clipboard; resolves to whether it got there. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, page not focused): try the old way.
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

export function CopyButton({
  text,
  label,
  className = 'link-button action-button',
  showText = true,
}: {
  /** The text to copy, read when clicked (an answer may still be growing). */
  text: () => string;
  /** The accessible name before copying: "Copy answer", "Copy code". */
  label: string;
  className?: string;
  /** Whether the word shows beside the icon (an icon-only button keeps its name for screen readers). */
  showText?: boolean;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const word = state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy';
  return (
    <>
      <button
        type="button"
        className={className}
        aria-label={state === 'idle' ? label : word}
        title={state === 'idle' ? label : word}
        onClick={async () => {
          const copied = await copyText(text());
          setState(copied ? 'copied' : 'failed');
          clearTimeout(timer.current);
          timer.current = setTimeout(() => setState('idle'), SHOWN_MS);
        }}
      >
        {state === 'copied' ? <CheckIcon /> : <CopyIcon />}
        {showText && <span>{word}</span>}
      </button>
      <span className="visually-hidden" aria-live="polite">
        {state === 'idle' ? '' : `${word}.`}
      </span>
    </>
  );
}
