/**
 * A delete button that asks once more in place ("Delete" / "Keep") before anything is removed: one click
 * on a small icon must not lose a chat or a document. Focus moves to "Keep" (the safe choice) so a
 * keyboard user can answer at once, and back to the trash button when they keep it.
 */
import { useEffect, useRef, useState } from 'react';
import { TrashIcon } from '../icons.tsx';

export function ConfirmDelete({
  what,
  onDelete,
}: {
  /** What is deleted, as a person reads it: "chat Trip to Lyon", "document handbook.pdf". */
  what: string;
  onDelete: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const keep = useRef<HTMLButtonElement>(null);
  const trash = useRef<HTMLButtonElement>(null);
  const returnFocus = useRef(false);
  useEffect(() => {
    if (asking) keep.current?.focus();
    else if (returnFocus.current) trash.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button
        ref={trash}
        type="button"
        className="icon-button delete-button"
        aria-label={`Delete ${what}`}
        title={`Delete ${what}`}
        onClick={() => setAsking(true)}
      >
        <TrashIcon />
      </button>
    );
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of two buttons, not a form's fieldset
    <span className="confirm" role="group" aria-label={`Delete ${what}?`}>
      <button
        type="button"
        className="button small danger"
        aria-label={`Confirm deleting ${what}`}
        onClick={() => {
          returnFocus.current = false;
          setAsking(false);
          onDelete();
        }}
      >
        Delete
      </button>
      <button
        ref={keep}
        type="button"
        className="button small"
        onClick={() => {
          returnFocus.current = true;
          setAsking(false);
        }}
        onKeyDown={(event) => {
          if (event.key === 'Escape') {
            event.stopPropagation();
            returnFocus.current = true;
            setAsking(false);
          }
        }}
      >
        Keep
      </button>
    </span>
  );
}
