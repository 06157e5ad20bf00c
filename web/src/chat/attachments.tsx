/**
 * Documents attached to the next message: each file added with the paperclip (or dropped on the chat)
 * is uploaded at once and shows as a chip (uploading, then its title, or why it was not added); the
 * message carries the ready ones as `data-attachment` parts, so the agent is told to read them first and
 * the sent message keeps them as chips.
 */
import { useState } from 'react';
import { uploadDocuments } from '../api/resources.ts';
import { CloseIcon, PaperclipIcon } from '../icons.tsx';
import type { AttachmentData, CadreMessage } from '../runs/protocol.ts';

export interface PendingAttachment {
  key: string;
  name: string;
  state: 'uploading' | 'ready' | 'failed';
  attachment?: AttachmentData;
  error?: string;
}

let nextKey = 0;

/** The attachments of the message being written, and how to add, remove and take them. */
export function useAttachments() {
  const [pending, setPending] = useState<PendingAttachment[]>([]);
  const update = (key: string, change: Partial<PendingAttachment>) =>
    setPending((all) => all.map((each) => (each.key === key ? { ...each, ...change } : each)));
  const add = (files: File[]) => {
    for (const file of files) {
      const key = `attachment-${nextKey++}`;
      setPending((all) => [...all, { key, name: file.name, state: 'uploading' }]);
      // One upload per file, so each chip says how its own file went.
      uploadDocuments([file], () => {}).then(
        ({ documents, refused }) => {
          const document = documents[0];
          if (document)
            update(key, { state: 'ready', attachment: { documentId: document.id, title: document.title } });
          else update(key, { state: 'failed', error: refused[0] ?? 'not added' });
        },
        (caught: Error) => update(key, { state: 'failed', error: caught.message }),
      );
    }
  };
  const remove = (key: string) => setPending((all) => all.filter((each) => each.key !== key));
  /** The ready attachments, taken for the message being sent (uploads still going stay for the next). */
  const take = (): AttachmentData[] => {
    const ready = pending.flatMap((each) =>
      each.state === 'ready' && each.attachment ? [each.attachment] : [],
    );
    setPending((all) => all.filter((each) => each.state === 'uploading'));
    return ready;
  };
  return { pending, add, remove, take };
}

/** The chips of the message being written, each with a button that takes it off. */
export function PendingAttachments({
  pending,
  onRemove,
}: {
  pending: PendingAttachment[];
  onRemove: (key: string) => void;
}) {
  if (pending.length === 0) return null;
  return (
    <ul className="attachment-chips pending" aria-label="Attached to your next message">
      {pending.map((each) => (
        <li key={each.key} className={`attachment-chip attachment-${each.state}`}>
          <PaperclipIcon />
          <span className="attachment-name">
            {each.state === 'ready'
              ? each.attachment?.title
              : each.state === 'uploading'
                ? `Adding ${each.name}…`
                : `${each.name} was not added: ${each.error}`}
          </span>
          <button
            type="button"
            className="icon-button"
            aria-label={`Remove ${each.attachment?.title ?? each.name}`}
            onClick={() => onRemove(each.key)}
          >
            <CloseIcon />
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The documents a sent message carried, as chips under it. */
export function SentAttachments({ attachments }: { attachments: AttachmentData[] }) {
  if (attachments.length === 0) return null;
  return (
    <ul className="attachment-chips" aria-label="Attached documents">
      {attachments.map((each) => (
        <li key={each.documentId} className="attachment-chip" title={`Document ${each.documentId}`}>
          <PaperclipIcon />
          <span className="attachment-name">{each.title}</span>
        </li>
      ))}
    </ul>
  );
}

/** The documents attached to a message (its `data-attachment` parts). */
export function attachmentsOf(message: CadreMessage): AttachmentData[] {
  return message.parts.flatMap((part) =>
    part.type === 'data-attachment' ? [part.data as AttachmentData] : [],
  );
}
