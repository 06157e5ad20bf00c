/**
 * `cadre/testing`: helpers for testing agents and tools without a provider. The scripted model answers
 * from a list of replies or a function of each request, and records what every request carried.
 */

export { agentDefinitionSchema } from './core/agent-definition.ts';
export { Runtime } from './core/runtime.ts';
export { testToolContext, toolCaller } from './core/test-tool-context.ts';
export { ToolRegistry } from './core/tool-registry.ts';
export {
  type Script,
  ScriptedModel,
  type ScriptedReply,
  type ScriptedRequest,
} from './models/scripted-model.ts';
