import type { ToolSet } from 'ai';
import type { AgentDefinition } from './agent-definition.ts';
import type { ChildRunner, ChildRunRequest } from './child-runs.ts';
import { bindContinueTool, CONTINUE_AGENT } from './continue-agent.ts';
import { messagesForChild } from './conversation.ts';
import { bindAgentTool, type ChildRequest, delegationFailure } from './delegation.ts';
import type { ResultEnvelope } from './envelope.ts';
import { SystemError } from './errors.ts';
import { forkedPrefix } from './fork-context.ts';
import type { LoopServices, RunSpec } from './loop-services.ts';
import { type ParentRun, type RunFrame, type TreeState, taskLine } from './run-frame.ts';
import { bindDirectTool, traceToolCall } from './tool-bindings.ts';
import { addUsage } from './usage.ts';

/**
 * A run's tools and the children they start. Children go through the runner seam (see child-runs.ts); the
 * in-process runner runs them with `run` (the loop itself, passed in so this file does not import it back).
 */

/** The loop that runs one agent (runAgent), as children need it. */
export type RunAgent = (services: LoopServices, tree: TreeState, spec: RunSpec) => Promise<ResultEnvelope>;

/** The tools `frame`'s agent may call: its direct tools, and its sub-agents where depth allows. */
export function bindTools(services: LoopServices, tree: TreeState, frame: RunFrame, run: RunAgent): ToolSet {
  const tools: ToolSet = {};
  const warming: Array<() => void> = [];
  for (const name of frame.definition.tools.flatMap((entry) => services.tools.expand(entry))) {
    const agent = services.agents.get(name);
    if (agent) {
      if (
        agent.enabled &&
        frame.depth + 1 <= (frame.maxDepth ?? tree.maxDepth) &&
        agent.name !== frame.definition.name
      ) {
        tools[name] = bindAgentTool(frame, agent, (request) => startChild(services, tree, request, run), {
          maxResultChars: services.limitsFor(agent).maxResultChars,
          reuse: reuseFor(services, tree, frame, agent),
          runIdFor: (toolCallId) =>
            childRunner(services, tree, run).runIdFor?.(frame.id, toolCallId) ?? tree.newId(),
        });
        // A run that may delegate may also go on with a sub-agent run that finished (offered once one has).
        tools[CONTINUE_AGENT] ??= bindContinueTool(
          frame,
          // An agent it may hand work to (bound above as a tool of its own) is one it may continue.
          (name) => (services.agents.has(name) && tools[name] ? services.agents.get(name) : undefined),
          (request) => startChild(services, tree, request, run),
          (definition) => services.limitsFor(definition).maxResultChars,
        );
      }
      continue;
    }
    const cadreTool = services.tools.get(name);
    if (!cadreTool || cadreTool.unavailable?.()) continue;
    tools[name] = bindDirectTool(frame, services.tools, cadreTool);
    frame.directTools.add(name);
    if (cadreTool.warm) warming.push(cadreTool.warm.bind(cadreTool));
  }
  // After this turn of the event loop, by which the run's first model request is on its way: a worker's
  // boot (mathjs: a core for a few hundred ms) then overlaps the model's answer instead of delaying the
  // request on a small machine.
  if (warming.length)
    setTimeout(() => {
      for (const warm of warming) warm();
    }, 0);
  return tools;
}

/** Reuse of `agent`'s earlier results in this session, when the tree has a memory and the TTL is above 0. */
function reuseFor(services: LoopServices, tree: TreeState, frame: RunFrame, agent: AgentDefinition) {
  if (!tree.reuse || !tree.sessionId) return undefined;
  const ttlMs = agent.reuseTtl === undefined ? tree.reuse.ttlMs : agent.reuseTtl * 1000;
  if (ttlMs <= 0) return undefined;
  return {
    memory: tree.reuse.memory,
    ttlMs,
    model: services.modelRefFor(agent, frame),
    ...(tree.reuse.recall === false ? { recall: false as const } : {}),
  };
}

/**
 * Starts a child through the runner seam: the live request becomes plain data (see child-runs.ts), and
 * the runner (in process unless the runtime was given another) runs it and hands back the envelope.
 */
async function startChild(
  services: LoopServices,
  tree: TreeState,
  request: ChildRequest,
  run: RunAgent,
): Promise<ResultEnvelope> {
  const { parent } = request;
  const fork = request.definition.context === 'fork';
  const data: ChildRunRequest = {
    agent: request.definition.name,
    task: request.task,
    inputs: request.inputs,
    context: request.continues
      ? request.continues.conversation
      : messagesForChild(parent.conversation(), request.definition.context),
    ...(request.continues ? { continues: request.continues.runId } : {}),
    ...(request.runId ? { runId: request.runId } : {}),
    ...(request.background ? { background: true as const } : {}),
    // A forked run, continued too, begins with its parent's prefix: its history holds calls to those tools.
    // A prefetch starts before its parent has sent anything: it gets the conversation, with its own prefix.
    ...(fork && parent.sent ? { fork: await forkedPrefix(parent, parent.sent) } : {}),
    rootRunId: tree.rootRunId,
    parentRunId: parent.id,
    ...(request.toolCallId ? { parentToolCallId: request.toolCallId } : {}),
    depth: parent.depth + 1,
    maxDepth: parent.maxDepth ?? tree.maxDepth,
    userId: tree.userId,
    ...(tree.sessionId ? { sessionId: tree.sessionId } : {}),
    ancestors: ancestorsOf(parent),
    ...(tree.reuse?.recall === false ? { freshResults: true } : {}),
    ...(Number.isFinite(parent.deadline) ? { deadline: parent.deadline } : {}),
  };
  const runner = childRunner(services, tree, run);
  // The child's conversation stays with its parent (continue_agent reaches it), not in the envelope its
  // tool call, events and journal keep.
  // A background run also stops when its parent can take no more turns (see background.ts's stopBackground).
  const signal = request.background
    ? AbortSignal.any([parent.signal, parent.backgroundStop.signal])
    : parent.signal;
  return runner.run(data, { signal }).then(({ conversation, ...envelope }) => {
    if (conversation)
      parent.finishedChildren.set(envelope.runId, { agent: request.definition.name, conversation });
    return envelope;
  });
}

/** The runner children start through: in process, unless the services wrap it (a queue). */
function childRunner(services: LoopServices, tree: TreeState, run: RunAgent): ChildRunner {
  const local = inProcessChildRunner(services, tree, run);
  return services.childRunner ? services.childRunner(local) : local;
}

/** The runs from the root down to `run`, as plain data. */
function ancestorsOf(run: ParentRun): ChildRunRequest['ancestors'] {
  const chain: ChildRunRequest['ancestors'] = [];
  for (let at: ParentRun | undefined = run; at; at = at.parent)
    chain.unshift({
      runId: at.id,
      agent: at.definition.name,
      journalKey: at.journalKey,
      modelRef: at.modelRef,
      ...(at.task !== undefined ? { task: taskLine(at.task) } : {}),
    });
  return chain;
}

/**
 * The parent of a child request that runs away from its parent's process: the ancestors it carries, as
 * frames hold them in process (identity, depth, journal place, model).
 */
export function parentOf(request: ChildRunRequest): ParentRun {
  let parent: ParentRun | undefined;
  request.ancestors.forEach((ancestor, depth) => {
    parent = {
      id: ancestor.runId,
      parent,
      depth,
      definition: { name: ancestor.agent },
      modelRef: ancestor.modelRef,
      journalKey: ancestor.journalKey,
      ...(ancestor.task !== undefined ? { task: ancestor.task } : {}),
    };
  });
  if (!parent) throw new SystemError('child_unrunnable', 'A child run request names no parent run.');
  return parent;
}

/** Runs child requests in this process, under their parent's live frame, with the tree's shared state. */
function inProcessChildRunner(services: LoopServices, tree: TreeState, run: RunAgent): ChildRunner {
  return {
    run: (request, cancellation) => {
      const parent = tree.frames.get(request.parentRunId);
      const definition = services.agents.get(request.agent);
      if (!parent || !definition) {
        const missing = parent ? `agent "${request.agent}"` : `parent run ${request.parentRunId}`;
        throw new SystemError('child_unrunnable', `A child run cannot start here: no ${missing}.`, {
          agent: request.agent,
        });
      }
      return run(services, tree, {
        definition,
        task: request.task,
        inputs: request.inputs,
        parent,
        history: request.context,
        ...(request.fork ? { fork: request.fork } : {}),
        signal: cancellation.signal,
        ...(request.parentToolCallId ? { parentToolCallId: request.parentToolCallId } : {}),
        ...(request.continues ? { continues: request.continues } : {}),
        ...(request.runId ? { runId: request.runId } : {}),
        ...(request.background ? { background: true as const } : {}),
      });
    },
  };
}

/**
 * Runs the prefetch agent as a child; its summary and how many model turns it took, or undefined when it
 * did not succeed. Turns are counted from the child's `step-finish` events: nothing else of the run's runs
 * yet, so every step under this run while the prefetch lasts is the prefetch's.
 */
export async function prefetch(
  services: LoopServices,
  tree: TreeState,
  frame: RunFrame,
  request: { agent: string; task: string },
  run: RunAgent,
): Promise<{ agent: string; summary: string; turns: number } | undefined> {
  const definition = services.agents.get(request.agent);
  if (!definition?.enabled) return undefined;
  const input = { task: request.task };
  let turns = 0;
  const stopCounting = tree.bus.subscribe((event) => {
    if (event.type === 'step-finish' && event.parentRunId === frame.id) turns += 1;
  });
  try {
    const envelope = await traceToolCall(
      frame,
      { toolCallId: 'prefetch', name: definition.name, input },
      () =>
        startChild(
          services,
          tree,
          { definition, task: request.task, inputs: {}, parent: frame, toolCallId: 'prefetch' },
          run,
        ),
      delegationFailure,
    );
    frame.childUsage = addUsage(frame.childUsage, envelope.subtreeUsage);
    return envelope.status === 'ok' || envelope.status === 'partial'
      ? { agent: definition.name, summary: envelope.summary, turns: turns || (envelope.turns ?? 0) }
      : undefined;
  } catch {
    return undefined;
  } finally {
    stopCounting();
  }
}
