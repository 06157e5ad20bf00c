/**
 * The page's keyboard shortcuts, and the sheet that lists them (`?`). A shortcut with a modifier works from
 * anywhere; `?` only where it would not be typed into a text box.
 */
import { useEffect, useRef } from 'react';

/** What the sheet lists: the keys and what they do. */
export const SHORTCUTS: ReadonlyArray<{ keys: string; does: string }> = [
  { keys: 'Ctrl+Shift+O', does: 'New chat' },
  { keys: 'Ctrl+K', does: 'Search chats' },
  { keys: 'Esc', does: 'Stop the answer (in the message box or the conversation)' },
  { keys: 'Enter / Shift+Enter', does: 'Send / new line in the message box' },
  { keys: '?', does: 'This list of shortcuts' },
];

function typingIn(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  return Boolean(element?.closest('input, textarea, select, [contenteditable="true"]'));
}

/** Listens for the page's shortcuts while the page is open. */
export function useShortcuts(actions: {
  newChat: () => void;
  searchChats: () => void;
  showSheet: () => void;
}) {
  const latest = useRef(actions);
  latest.current = actions;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const modifier = event.ctrlKey || event.metaKey;
      if (modifier && event.shiftKey && event.key.toLowerCase() === 'o') {
        event.preventDefault();
        latest.current.newChat();
      } else if (modifier && !event.shiftKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        latest.current.searchChats();
      } else if (event.key === '?' && !modifier && !typingIn(event.target)) {
        if (document.querySelector('dialog[open]')) return;
        event.preventDefault();
        latest.current.showSheet();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

/** The list of shortcuts, as a modal dialog (Esc or Close shuts it). */
export function ShortcutsSheet({ onClose }: { onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} className="shortcuts-sheet" aria-labelledby="shortcuts-title" onClose={onClose}>
      <header className="dialog-header">
        <h2 id="shortcuts-title">Keyboard shortcuts</h2>
        <button type="button" className="button small" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </header>
      <div className="panel-content">
        <dl className="shortcuts">
          {SHORTCUTS.map((shortcut) => (
            <div key={shortcut.keys}>
              <dt>
                <kbd>{shortcut.keys}</kbd>
              </dt>
              <dd>{shortcut.does}</dd>
            </div>
          ))}
        </dl>
        <p className="muted small-text">On a Mac, ⌘ works in place of Ctrl.</p>
      </div>
    </dialog>
  );
}
