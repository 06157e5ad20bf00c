/**
 * The chat stream's types, imported (type-only) from the server's own protocol file so the two cannot
 * drift, and the UI message type useChat works with.
 */
import type { UIMessage } from 'ai';
import type { CadreDataParts, ChatMessageMetadata } from '../../../src/server/chat-protocol.ts';

export type { Source } from '../../../src/core/envelope.ts';
export type { CadreEvent, PlanStep } from '../../../src/core/events.ts';
export type { RunState, RunStatus } from '../../../src/core/status.ts';
export type { Usage } from '../../../src/core/usage.ts';
export type {
  CadreDataParts,
  ChatMessageMetadata,
  RunPartData,
  RunToolCallView,
} from '../../../src/server/chat-protocol.ts';

/** A chat message of Cadre's stream: metadata says which run tree answered; data parts carry the runs. */
export type CadreMessage = UIMessage<ChatMessageMetadata, CadreDataParts>;
