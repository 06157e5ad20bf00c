/**
 * The model badge in the top bar, which opens the models the server's set-up providers offer: choosing
 * one saves it as the main agent's model at once (the next question uses it). A model of a provider with
 * no key is refused by the server when chosen, and the refusal shows here.
 */
import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { listModels, type ModelChoices, updateAgent } from '../api/resources.ts';

export function ModelPicker({
  agent,
  current,
  onChosen,
}: {
  agent: string;
  current: string | undefined;
  onChosen: (model: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const [choices, setChoices] = useState<ModelChoices | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [refusal, setRefusal] = useState<string | undefined>();
  const [saving, setSaving] = useState<string | undefined>();
  const [other, setOther] = useState('');
  const root = useRef<HTMLDivElement>(null);
  const badge = useRef<HTMLButtonElement>(null);
  const listId = useId();

  useEffect(() => {
    if (!open) return;
    setRefusal(undefined);
    listModels()
      .then((listed) => {
        setChoices(listed);
        setLoadError(undefined);
      })
      .catch((caught: Error) => setLoadError(caught.message));
    const outside = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [open]);

  const choose = async (model: string) => {
    setSaving(model);
    setRefusal(undefined);
    try {
      await updateAgent(agent, { model });
      onChosen(model);
      setOpen(false);
      badge.current?.focus();
    } catch (caught) {
      setRefusal((caught as Error).message);
    } finally {
      setSaving(undefined);
    }
  };

  // Esc closes the list only: it never reaches the page's "stop the answer".
  const closeOnEscape = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !open) return;
    event.preventDefault();
    event.stopPropagation();
    setOpen(false);
    badge.current?.focus();
  };

  return (
    <div className="model-picker" ref={root}>
      <button
        ref={badge}
        type="button"
        className="model-indicator"
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-controls={open ? listId : undefined}
        title={`The ${agent} agent's model: choose another`}
        onClick={() => setOpen(!open)}
        onKeyDown={closeOnEscape}
      >
        <span className="visually-hidden">Model: </span>
        {current ?? 'Choose a model'}
      </button>
      {open && (
        <div
          className="model-menu"
          id={listId}
          role="dialog"
          aria-label={`Models for ${agent}`}
          onKeyDown={closeOnEscape}
        >
          {!choices && !loadError && <p className="muted">Asking the providers for their models…</p>}
          {loadError && (
            <p className="model-error" role="alert">
              {loadError}
            </p>
          )}
          {choices?.providers.length === 0 && (
            <p className="muted">No provider is set up on this server: set one of the variables below.</p>
          )}
          {choices?.providers.map((group) => (
            <section key={group.provider} aria-label={group.provider}>
              <h4>{group.provider}</h4>
              {group.error && (
                <p className="muted small-text">Its own list did not answer; models named in the config.</p>
              )}
              <ul>
                {group.models.map((model) => (
                  <li key={model}>
                    <button
                      type="button"
                      className={`model-option${model === current ? ' current' : ''}`}
                      aria-pressed={model === current}
                      disabled={saving !== undefined}
                      onClick={() => void choose(model)}
                    >
                      {model.slice(group.provider.length + 1)}
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          ))}
          <form
            className="model-other"
            onSubmit={(event) => {
              event.preventDefault();
              const model = other.trim();
              if (model) void choose(model);
            }}
          >
            <label>
              <span>Another model</span>
              <input
                value={other}
                placeholder="provider:model"
                onChange={(event) => setOther(event.target.value)}
              />
            </label>
            <button type="submit" className="button small" disabled={saving !== undefined || !other.trim()}>
              Use
            </button>
          </form>
          {refusal && (
            <p className="model-error" role="alert">
              {refusal}
            </p>
          )}
          {choices && choices.unconfigured.length > 0 && (
            <p className="muted small-text">
              Not set up here:{' '}
              {choices.unconfigured.map((each) => `${each.provider} (${each.variable})`).join(', ')}.
            </p>
          )}
        </div>
      )}
    </div>
  );
}
