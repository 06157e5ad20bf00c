/**
 * What the other rooms may use of the runtime core. A front door (server, cli, mcp) imports core only
 * from here (test/import-graph.test.ts holds it), so the loop's internals (frames, the stream reader, the
 * delegation binder) can change without a door noticing.
 */
export type { AgentDefinition } from './agent-definition.ts';
export { agentDefinitionSchema } from './agent-definition.ts';
export type { ApprovalDecision, ApprovalRequest, ApprovalSettings, Approver } from './approval-settings.ts';
export { DEFAULT_APPROVAL_TIMEOUT_MS, NO_APPROVALS } from './approval-settings.ts';
export { agentToolInput } from './delegation.ts';
export { type ResultEnvelope, type Source, toModelView } from './envelope.ts';
export {
  CadreError,
  describeError,
  type Fault,
  ModelBehaviorError,
  SystemError,
  UserError,
} from './errors.ts';
export type {
  ApprovalRequestEvent,
  ApprovalResultEvent,
  CadreEvent,
  CadreEventType,
  EventListener,
  ModelRetryEvent,
  PlanStep,
  PlanUpdateEvent,
  ReasoningDeltaEvent,
  RunErrorEvent,
  RunFinishEvent,
  RunStartEvent,
  StepFinishEvent,
  TextDeltaEvent,
  ToolCallEvent,
  ToolResultEvent,
} from './events.ts';
export { EventBus } from './events.ts';
export { DEFAULT_LIMITS, type RuntimeLimits } from './limits.ts';
export { type CadreCallOptions, cadreCallOptionsOf, type ModelRetryNotice } from './model-call-options.ts';
export { describeModelError } from './model-errors.ts';
export { buildRunTree, type RunTree, RunTreeBuilder, sumTreeUsage, type ToolCallRecord } from './run-tree.ts';
export {
  foldRun,
  type RetryNotice,
  RunProjection,
  type RunToolCall,
  type RunView,
  renderRunTree,
} from './run-view.ts';
export {
  noModelError,
  type RunOutcome,
  type RunRequest,
  Runtime,
  type RuntimeOptions,
} from './runtime.ts';
export { RUN_STATUSES, type RunState, type RunStatus } from './status.ts';
export { type CadreTool, defineTool, type ToolContext } from './tool.ts';
export { nestingDepth } from './tool-call-bounds.ts';
export { ToolRegistry, type ToolSource } from './tool-registry.ts';
export { closestName } from './unknown-agent.ts';
export { addUsage, type Cost, type Usage, zeroUsage } from './usage.ts';
