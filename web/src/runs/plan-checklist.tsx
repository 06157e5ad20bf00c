import type { PlanStep } from './protocol.ts';

const MARKS: Record<PlanStep['status'], string> = {
  pending: '○',
  running: '◔',
  done: '✓',
  failed: '✕',
  skipped: '–',
};

/** A planner's plan, ticking as its steps run. */
export function PlanChecklist({ plan }: { plan: PlanStep[] }) {
  const done = plan.filter((step) => step.status === 'done').length;
  return (
    <div className="plan">
      <div className="plan-title">
        Plan · {done} of {plan.length} done
      </div>
      <ol className="plan-steps" aria-label="Plan">
        {plan.map((step, index) => (
          // Steps have no ids; a plan only grows or changes status in place, so the index is stable.
          // biome-ignore lint/suspicious/noArrayIndexKey: see above
          <li key={index} className={`plan-step plan-${step.status}`}>
            <span className="plan-mark" role="img" aria-label={step.status}>
              {step.status === 'running' ? <span className="spinner small" /> : MARKS[step.status]}
            </span>
            <span className="plan-step-title">{step.title}</span>
            {step.result && <span className="plan-result"> — {step.result}</span>}
          </li>
        ))}
      </ol>
    </div>
  );
}
