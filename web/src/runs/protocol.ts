/**
 * The chat stream's types, imported (type-only) from the server's own protocol file so the two cannot
 * drift (`CadreMessage` is the UI message type useChat works with).
 */

export type {
  AttachmentData,
  CadreDataParts,
  CadreUIMessage as CadreMessage,
  ChatMessageMetadata,
  RunPartData,
  RunToolCallView,
} from '../../../src/app/answer/protocol.ts';
export type { Source } from '../../../src/core/envelope.ts';
export type { CadreEvent, PlanStep } from '../../../src/core/events.ts';
export type { RetryNotice, RunToolCall, RunView } from '../../../src/core/run-view.ts';
export type { RunState, RunStatus } from '../../../src/core/status.ts';
export type { Usage } from '../../../src/core/usage.ts';
