/** Cadre's public API: the runtime, its protocol types and the pieces to wire it. */

export { Cadre } from './app/create-cadre.ts';
export { type AgentDefinition, agentDefinitionSchema } from './core/agent-definition.ts';
export { type ResultEnvelope, type Source, toModelView } from './core/envelope.ts';
export { CadreError, ModelBehaviorError, SystemError, UserError } from './core/errors.ts';
export type { CadreEvent, CadreEventType } from './core/events.ts';
export { EventBus } from './core/events.ts';
export { DEFAULT_LIMITS, type RuntimeLimits } from './core/limits.ts';
export { buildRunTree, type RunTree, RunTreeBuilder } from './core/run-tree.ts';
export { type RunOutcome, type RunRequest, Runtime, type RuntimeOptions } from './core/runtime.ts';
export type { RunStatus } from './core/status.ts';
export { type CadreTool, defineTool, type ToolContext } from './core/tool.ts';
export { ToolRegistry } from './core/tool-registry.ts';
export { createModelResolver } from './models/resolve-model.ts';
