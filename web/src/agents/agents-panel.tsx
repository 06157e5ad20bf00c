/**
 * The agents: what each does, its tools, model and limits, the context its runs get and whether they run in
 * the background; a switch to offer it to the main agent or not and a model field, both saved at once (the
 * next message uses them); and the delegation mode with an indicator of whether the last answer used it.
 * Model fields suggest the models the set-up providers offer.
 */
import { useCallback, useEffect, useState } from 'react';
import {
  type AgentSummary,
  type DelegationMode,
  getSettings,
  listAgents,
  listModels,
  updateAgent,
  updateSettings,
} from '../api/resources.ts';

const MODES: Array<{ value: DelegationMode; label: string; help: string }> = [
  { value: 'off', label: 'Off', help: 'The main agent answers alone; no sub-agent is offered.' },
  { value: 'delegate', label: 'Delegate', help: 'The main agent decides when to hand work to a sub-agent.' },
  {
    value: 'prefetch',
    label: 'Prefetch',
    help: 'A sub-agent gathers context first (for questions matching the trigger), then the main agent answers.',
  },
];

/** The id of the list of models every model field suggests. */
const MODEL_CHOICES = 'agent-model-choices';

export function AgentsPanel({ lastDelegationUsed }: { lastDelegationUsed: boolean | undefined }) {
  const [agents, setAgents] = useState<AgentSummary[] | undefined>();
  const [mode, setMode] = useState<DelegationMode | undefined>();
  const [prefetch, setPrefetch] = useState<{ agent: string; trigger: string }>({
    agent: 'research',
    trigger: '.',
  });
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  // What each model field offers: the models the set-up providers list (GET /api/models).
  const [models, setModels] = useState<string[]>([]);
  useEffect(() => {
    listModels()
      .then((choices) => setModels(choices.providers.flatMap((group) => group.models)))
      .catch(() => undefined);
  }, []);

  const refresh = useCallback(async () => {
    try {
      setAgents(await listAgents());
    } catch (caught) {
      setError((caught as Error).message);
    }
    try {
      const settings = await getSettings();
      setMode(settings.delegationMode);
      if (settings.prefetch) setPrefetch(settings.prefetch);
    } catch {
      // A server without settings: the mode control stays hidden.
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  const change = async (
    agent: AgentSummary,
    update: {
      enabled?: boolean;
      model?: string | null;
      timeoutSeconds?: number | null;
      reasoning?: string | null;
    },
  ) => {
    setError(undefined);
    setAgents((current) =>
      current?.map((each) =>
        each.name === agent.name
          ? {
              ...each,
              ...(update.enabled !== undefined ? { enabled: update.enabled } : {}),
              model: update.model ?? each.model,
              timeoutSeconds:
                update.timeoutSeconds === undefined
                  ? each.timeoutSeconds
                  : (update.timeoutSeconds ?? undefined),
              reasoning: update.reasoning === undefined ? each.reasoning : (update.reasoning ?? undefined),
            }
          : each,
      ),
    );
    try {
      await updateAgent(agent.name, update);
      setSaved(`Saved ${agent.name}.`);
    } catch (caught) {
      setError(`${agent.name}: ${(caught as Error).message}`);
      await refresh();
    }
  };
  const changeMode = async (next: DelegationMode) => {
    const previous = mode;
    setMode(next);
    setError(undefined);
    try {
      await updateSettings(
        next === 'prefetch' ? { delegationMode: next, prefetch } : { delegationMode: next },
      );
      setSaved(`Delegation mode: ${next}.`);
    } catch (caught) {
      setMode(previous);
      setError((caught as Error).message);
    }
  };

  const subAgents = agents?.filter((agent) => agent.name !== 'main');
  const main = agents?.find((agent) => agent.name === 'main');
  return (
    <div className="panel-content">
      <datalist id={MODEL_CHOICES}>
        {models.map((model) => (
          <option key={model} value={model} />
        ))}
      </datalist>
      {main && (
        <section className="agent main-agent" aria-label="Main agent">
          <div className="agent-head">
            <h3>main</h3>
            <span className="muted">answers you; always on</span>
          </div>
          <div className="agent-row">
            <ModelField agent={main} onSave={(model) => void change(main, { model })} />
            <ReasoningField agent={main} onSave={(reasoning) => void change(main, { reasoning })} />
            {main.effectiveModel && main.effectiveModel !== main.model && (
              <span className="muted">runs on {main.effectiveModel}</span>
            )}
          </div>
        </section>
      )}
      {mode && (
        <fieldset className="modes">
          <legend>Delegation mode</legend>
          {MODES.map((option) => (
            <label key={option.value} className="mode">
              <input
                type="radio"
                name="delegation-mode"
                value={option.value}
                checked={mode === option.value}
                onChange={() => void changeMode(option.value)}
              />
              <span>
                <strong>{option.label}</strong> <span className="muted">{option.help}</span>
              </span>
            </label>
          ))}
          {mode === 'prefetch' && (
            <div className="prefetch-fields">
              <label>
                <span>Agent</span>
                <select
                  value={prefetch.agent}
                  onChange={(event) => setPrefetch({ ...prefetch, agent: event.target.value })}
                  onBlur={() => void changeMode('prefetch')}
                >
                  {(subAgents ?? []).map((agent) => (
                    <option key={agent.name} value={agent.name}>
                      {agent.name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                <span>For questions matching</span>
                <input
                  value={prefetch.trigger}
                  aria-describedby="trigger-help"
                  onChange={(event) => setPrefetch({ ...prefetch, trigger: event.target.value })}
                  onBlur={() => void changeMode('prefetch')}
                />
              </label>
              <span id="trigger-help" className="muted small-text">
                a regular expression; <code>.</code> matches every question
              </span>
            </div>
          )}
          <p className="mode-status" role="status">
            <span className={`dot ${lastDelegationUsed ? 'dot-on' : 'dot-off'}`} aria-hidden="true" />
            {lastDelegationUsed === undefined
              ? 'No answer yet in this chat.'
              : lastDelegationUsed
                ? 'The last answer used delegation.'
                : 'The last answer did not use delegation.'}
          </p>
        </fieldset>
      )}
      {error && (
        <p className="panel-error" role="alert">
          {error}
        </p>
      )}
      <p className="visually-hidden" role="status">
        {saved}
      </p>
      {agents === undefined && !error && <p className="muted">Loading…</p>}
      <ul className="agents">
        {subAgents?.map((agent) => (
          <li key={agent.name} className={`agent${agent.enabled ? '' : ' disabled'}`}>
            <div className="agent-head">
              <h3>{agent.name}</h3>
              <button
                type="button"
                role="switch"
                aria-checked={agent.enabled}
                aria-label={`${agent.name} enabled`}
                className="switch"
                onClick={() => void change(agent, { enabled: !agent.enabled })}
              >
                <span className="switch-knob" aria-hidden="true" />
              </button>
            </div>
            <p className="agent-description">{agent.description}</p>
            <div className="agent-tools">
              {agent.tools.map((tool) => (
                <code key={tool} className="tool-chip">
                  {tool}
                </code>
              ))}
            </div>
            <AgentTraits agent={agent} />
            <div className="agent-row">
              <ModelField agent={agent} onSave={(model) => void change(agent, { model })} />
              <TimeoutField
                agent={agent}
                onSave={(timeoutSeconds) => void change(agent, { timeoutSeconds })}
              />
              <ReasoningField agent={agent} onSave={(reasoning) => void change(agent, { reasoning })} />
              {agent.effectiveModel && agent.effectiveModel !== agent.model && (
                <span className="muted">runs on {agent.effectiveModel}</span>
              )}
              {agent.limits.length > 0 && (
                <span className="agent-limits">
                  {agent.limits.map(([label, value]) => `${value} ${label}`).join(' · ')}
                </span>
              )}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** How a run of the agent starts: what of its parent's conversation it gets, and whether it runs in the background. */
function AgentTraits({ agent }: { agent: AgentSummary }) {
  const traits = [
    agent.context && `context: ${agent.context}`,
    agent.background === true && 'runs in the background',
    agent.background === 'allowed' && 'may run in the background',
  ].filter(Boolean);
  if (!traits.length) return null;
  return <p className="agent-traits">{traits.join(' · ')}</p>;
}

function ModelField({ agent, onSave }: { agent: AgentSummary; onSave: (model: string | null) => void }) {
  const [value, setValue] = useState(agent.model);
  useEffect(() => setValue(agent.model), [agent.model]);
  const save = () => {
    const trimmed = value.trim();
    if (trimmed === agent.model) return;
    onSave(trimmed === '' || trimmed === 'inherit' ? null : trimmed);
  };
  return (
    <label className="model-field">
      <span>Model</span>
      <input
        aria-label={`${agent.name} model`}
        list={MODEL_CHOICES}
        value={value}
        placeholder="inherit"
        onChange={(event) => setValue(event.target.value)}
        onBlur={save}
        onKeyDown={(event) => {
          if (event.key === 'Enter') save();
        }}
      />
    </label>
  );
}

/** Seconds each run of the agent may take; empty goes back to its definition's limit. */
function TimeoutField({
  agent,
  onSave,
}: {
  agent: AgentSummary;
  onSave: (timeoutSeconds: number | null) => void;
}) {
  const shown = agent.timeoutSeconds === undefined ? '' : String(agent.timeoutSeconds);
  const [value, setValue] = useState(shown);
  useEffect(() => setValue(shown), [shown]);
  const save = () => {
    const trimmed = value.trim();
    if (trimmed === shown) return;
    const seconds = Number(trimmed);
    if (trimmed === '') onSave(null);
    else if (Number.isFinite(seconds) && seconds > 0) onSave(seconds);
    else setValue(shown);
  };
  return (
    <label className="model-field timeout-field">
      <span>Timeout (s)</span>
      <input
        aria-label={`${agent.name} timeout in seconds`}
        inputMode="decimal"
        value={value}
        placeholder="default"
        onChange={(event) => setValue(event.target.value)}
        onBlur={save}
        onKeyDown={(event) => {
          if (event.key === 'Enter') save();
        }}
      />
    </label>
  );
}

const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

/**
 * How much the agent's model thinks before answering: an effort, or the provider's default. A thinking
 * budget set in the config or the definition shows as it is; choosing an effort here replaces it.
 */
function ReasoningField({
  agent,
  onSave,
}: {
  agent: AgentSummary;
  onSave: (reasoning: string | null) => void;
}) {
  const current = agent.reasoning ?? '';
  const options = current && !EFFORTS.includes(current) ? [current, ...EFFORTS] : EFFORTS;
  return (
    <label className="model-field reasoning-field">
      <span>Reasoning</span>
      <select
        aria-label={`${agent.name} reasoning`}
        value={current}
        onChange={(event) => {
          const value = event.target.value;
          if (value !== current) onSave(value === '' ? null : value);
        }}
      >
        <option value="">provider default</option>
        {options.map((option) => (
          <option key={option} value={option} disabled={!EFFORTS.includes(option)}>
            {option}
          </option>
        ))}
      </select>
    </label>
  );
}
