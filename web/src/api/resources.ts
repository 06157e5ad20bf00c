/**
 * The API's sessions, documents, agents and settings as the views use them. Each reader accepts the field
 * names the server uses (and a list either bare or wrapped in an object), and fills what the view needs,
 * so a field missing from an answer shows as blank rather than breaking the page.
 */
import type { CadreMessage } from '../runs/protocol.ts';
import type { PendingApproval } from '../runs/run-store.ts';
import {
  ApiError,
  apiFetch,
  apiJson,
  authHeaders,
  errorFromResponse,
  getToken,
  unreachableMessage,
} from './client.ts';

type Json = Record<string, unknown>;

function list(body: unknown, key: string): Json[] {
  if (Array.isArray(body)) return body as Json[];
  const inner = (body as Json | null)?.[key];
  return Array.isArray(inner) ? (inner as Json[]) : [];
}
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const number = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const time = (value: unknown): number | undefined =>
  typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) || undefined : undefined;

export interface SessionSummary {
  id: string;
  title: string;
  updatedAt?: number | undefined;
  /** An answer is being written in it right now (from the live list, `GET /api/sessions/events`). */
  answering?: boolean;
}

/** The chat list as the server sends it, newest first. */
function sessionsFrom(body: unknown): SessionSummary[] {
  const sessions = list(body as Json, 'sessions').map((item) => ({
    id: String(item.id),
    title: text(item.title) || 'Untitled chat',
    updatedAt: time(item.updatedAt ?? item.updated_at ?? item.createdAt ?? item.created_at),
    ...(typeof item.answering === 'boolean' ? { answering: item.answering } : {}),
  }));
  return sessions.sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
}

/** A message of the caller's that matches a search of the chat list. */
export interface MessageMatch {
  sessionId: string;
  sessionTitle: string;
  messageId: string;
  role: string;
  line: string;
}

/** The caller's messages that say what `query` says (`GET /api/sessions/search`), best first. */
export async function searchMessages(query: string, signal?: AbortSignal): Promise<MessageMatch[]> {
  const body = await apiJson(`/api/sessions/search?q=${encodeURIComponent(query)}`, signal ? { signal } : {});
  return list(body, 'matches').map((item) => ({
    sessionId: String(item.sessionId),
    sessionTitle: text(item.sessionTitle) || 'Untitled chat',
    messageId: String(item.messageId),
    role: String(item.role),
    line: text(item.line) ?? '',
  }));
}

export async function listSessions(): Promise<SessionSummary[]> {
  return sessionsFrom(await apiJson('/api/sessions'));
}

/**
 * Follows the chat list live (one server-sent stream per page, `GET /api/sessions/events`): `onList` gets it
 * first as it is, then at each change made anywhere (another tab, a terminal). Reconnects after a break,
 * a little later each time; the returned function stops it.
 */
export function followSessions(onList: (sessions: SessionSummary[]) => void): () => void {
  const stop = new AbortController();
  let delay = 1000;
  const run = async () => {
    while (!stop.signal.aborted) {
      try {
        const response = await apiFetch('/api/sessions/events', { signal: stop.signal });
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buffered = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          delay = 1000;
          buffered += value;
          let end = buffered.indexOf('\n\n');
          while (end !== -1) {
            const data = buffered
              .slice(0, end)
              .split('\n')
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trim())
              .join('\n');
            buffered = buffered.slice(end + 2);
            if (data) onList(sessionsFrom(JSON.parse(data)));
            end = buffered.indexOf('\n\n');
          }
        }
      } catch {
        // The server went away or the page is signing in again: try again shortly.
      }
      if (stop.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  };
  void run();
  return () => stop.abort();
}

/** A stored message as useChat holds it: its own parts when stored, else its text. */
function toMessage(item: Json, index: number): CadreMessage {
  const role = item.role === 'user' ? 'user' : 'assistant';
  const parts = Array.isArray(item.parts)
    ? (item.parts as CadreMessage['parts'])
    : [{ type: 'text' as const, text: text(item.content) ?? '' }];
  return {
    id: text(item.id) ?? `stored-${index}`,
    role,
    parts,
    ...(item.metadata && typeof item.metadata === 'object'
      ? { metadata: item.metadata as CadreMessage['metadata'] }
      : {}),
  };
}

/** A question whose answer was cut off when the server's process died; it can be resumed. */
export interface InterruptedAnswer {
  runId: string;
  task: string;
}

/** An earlier version of what followed `afterId` (null: the chat's start), replaced by a regenerate or an edit. */
export interface MessageVersion {
  id: string;
  afterId: string | null;
  messages: CadreMessage[];
}

export async function getSession(id: string): Promise<{
  id: string;
  title: string;
  messages: CadreMessage[];
  versions: MessageVersion[];
  interrupted: InterruptedAnswer[];
}> {
  const body = await apiJson<Json>(`/api/sessions/${encodeURIComponent(id)}`);
  const session = (body.session as Json | undefined) ?? body;
  return {
    id: String(session.id ?? id),
    title: text(session.title) || 'Untitled chat',
    messages: list(session.messages ?? body.messages, 'messages').map(toMessage),
    versions: versionsOf(session),
    interrupted: (Array.isArray(body.interrupted) ? (body.interrupted as Json[]) : []).map((item) => ({
      runId: String(item.runId),
      task: String(item.task ?? ''),
    })),
  };
}

/** Makes an earlier version current again; answers with the session's messages and versions after it. */
export async function restoreVersion(
  sessionId: string,
  versionId: string,
): Promise<{ messages: CadreMessage[]; versions: MessageVersion[] }> {
  const body = await apiJson<Json>(
    `/api/sessions/${encodeURIComponent(sessionId)}/versions/${encodeURIComponent(versionId)}/restore`,
    { method: 'POST' },
  );
  return { messages: list(body.messages, 'messages').map(toMessage), versions: versionsOf(body) };
}

const versionsOf = (session: Json): MessageVersion[] =>
  (Array.isArray(session.versions) ? (session.versions as Json[]) : []).map((version) => ({
    id: String(version.id),
    afterId: text(version.afterId) ?? null,
    messages: list(version.messages, 'messages').map(toMessage),
  }));

/** Continues an interrupted tree from its journal; answers with the new attempt's root run id. */
export async function resumeRun(runId: string): Promise<string> {
  const body = await apiJson<Json>(`/api/runs/${encodeURIComponent(runId)}/resume`, { method: 'POST' });
  return String(body.runId);
}

/** Gives a chat the title the person chose; answers with the title the server kept (trimmed). */
export async function renameSession(id: string, title: string): Promise<string> {
  const body = await apiJson<Json>(`/api/sessions/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    json: { title },
  });
  return text((body.session as Json | undefined)?.title) ?? title;
}

/**
 * Downloads a chat as Markdown or as JSON with its run trees. Fetched (the token travels in a header a
 * plain link cannot carry) and saved through a temporary link, under the name the server gives it.
 */
export async function downloadSession(id: string, format: 'md' | 'json'): Promise<void> {
  const response = await apiFetch(`/api/sessions/${encodeURIComponent(id)}/export?format=${format}`);
  const disposition = response.headers.get('content-disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? `chat.${format}`;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has taken the blob by the next task; the URL is not needed after it.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export async function deleteSession(id: string): Promise<void> {
  await apiFetch(`/api/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

export interface DocumentSummary {
  id: string;
  title: string;
  type: string;
  pages?: number | undefined;
  size?: number | undefined;
  addedAt?: number | undefined;
}

function toDocument(item: Json): DocumentSummary {
  return {
    id: String(item.id),
    title: text(item.title) || text(item.filename) || text(item.name) || String(item.id),
    type: text(item.type) ?? text(item.mimeType) ?? '',
    pages: number(item.pages),
    size: number(item.size_bytes ?? item.size ?? item.sizeBytes),
    addedAt: time(item.added ?? item.addedAt ?? item.createdAt),
  };
}

export async function listDocuments(): Promise<DocumentSummary[]> {
  return list(await apiJson('/api/documents'), 'documents').map(toDocument);
}

export interface DocumentHit {
  documentId: string;
  title: string;
  page?: number | undefined;
  snippet: string;
}

export async function searchDocuments(query: string): Promise<DocumentHit[]> {
  const body = await apiJson(`/api/documents/search?q=${encodeURIComponent(query)}`);
  const hits = list(body, 'results').length ? list(body, 'results') : list(body, 'hits');
  return hits.map((hit) => ({
    documentId: String(hit.document_id ?? hit.documentId ?? ''),
    title: text(hit.title) ?? '',
    page: number(hit.page),
    snippet: text(hit.snippet) ?? text(hit.passage) ?? text(hit.text) ?? '',
  }));
}

export async function deleteDocument(id: string): Promise<void> {
  await apiFetch(`/api/documents/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/**
 * Uploads files as one multipart request (one `file` field each), reporting the bytes sent; XHR because
 * fetch cannot report upload progress.
 */
export function uploadDocuments(
  files: File[],
  onProgress: (fraction: number) => void,
): Promise<{ documents: DocumentSummary[]; refused: string[] }> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const file of files) form.append('file', file, file.name);
    const request = new XMLHttpRequest();
    request.open('POST', '/api/documents');
    const token = getToken();
    for (const [name, value] of Object.entries(authHeaders(token))) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onerror = () => reject(new ApiError(0, unreachableMessage()));
    request.onload = async () => {
      const response = new Response(request.responseText, {
        status: request.status,
        statusText: request.statusText,
      });
      if (request.status < 200 || request.status >= 300) {
        reject(await errorFromResponse(response, token));
        return;
      }
      try {
        const body = JSON.parse(request.responseText) as Json;
        resolve({
          documents: list(body, 'documents').map(toDocument),
          // Files the server refused while it added the others: each with its reason.
          refused: list(body, 'errors').map((error) => text(error.message) ?? String(error.filename)),
        });
      } catch {
        resolve({ documents: [], refused: [] });
      }
    };
    request.send(form);
  });
}

export interface AgentSummary {
  name: string;
  description: string;
  tools: string[];
  model: string;
  enabled: boolean;
  limits: Array<[string, string]>;
  source?: string | undefined;
  /** The model it runs on now (its own, or inherited). */
  effectiveModel?: string | undefined;
  /** Seconds each run may take, when its definition or a setting limits it. */
  timeoutSeconds?: number | undefined;
  /** Reasoning it asks for: an effort ("low"…), or "N tokens" for a thinking budget; undefined for the provider's default. */
  reasoning?: string | undefined;
  /** What of its parent's conversation a run gets: "isolated", "last-4", "full" or "fork". */
  context?: string | undefined;
  /** true: every delegation to it runs in the background; "allowed": its caller may choose to. */
  background?: boolean | 'allowed' | undefined;
}

const LIMIT_FIELDS: Array<[string, string, string]> = [
  ['maxTurns', 'turns', ''],
  ['timeout', 'time', ' s'],
  ['budget', 'tokens', ''],
  ['maxDepth', 'depth', ''],
  ['maxConcurrency', 'at once', ''],
];

function toAgent(item: Json): AgentSummary {
  const definition = (item.definition as Json | undefined) ?? item;
  const limitsSource = (item.limits as Json | undefined) ?? definition;
  const limits: Array<[string, string]> = [];
  for (const [field, label, unit] of LIMIT_FIELDS) {
    const value = limitsSource[field];
    if (typeof value === 'number') limits.push([label, `${value}${unit}`]);
  }
  const tools = definition.tools;
  return {
    name: String(item.name ?? definition.name),
    description: text(item.description) ?? text(definition.description) ?? '',
    tools: Array.isArray(tools) ? tools.map(String) : typeof tools === 'string' ? tools.split(/,\s*/) : [],
    model: text(item.model) ?? text(definition.model) ?? 'inherit',
    enabled: item.enabled !== false,
    limits,
    source: text(item.source),
    effectiveModel: text(item.effectiveModel),
    timeoutSeconds: typeof limitsSource.timeout === 'number' ? limitsSource.timeout : undefined,
    reasoning: reasoningText(item.reasoning),
    context: text(item.context) ?? text(definition.context),
    background: backgroundOf(item.background ?? definition.background),
  };
}

function backgroundOf(value: unknown): AgentSummary['background'] {
  return value === true || value === 'allowed' ? value : value === false ? false : undefined;
}

function reasoningText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const budget = (value as { budgetTokens?: unknown } | null | undefined)?.budgetTokens;
  return typeof budget === 'number' ? `${budget} tokens` : undefined;
}

export async function listAgents(): Promise<AgentSummary[]> {
  return list(await apiJson('/api/agents'), 'agents').map(toAgent);
}

export async function updateAgent(
  name: string,
  change: {
    enabled?: boolean;
    model?: string | null;
    timeoutSeconds?: number | null;
    reasoning?: string | null;
  },
): Promise<void> {
  await apiJson(`/api/agents/${encodeURIComponent(name)}`, { method: 'PATCH', json: change });
}

/** One set-up provider's models ("provider:model"), and why it is the config's list when its own failed. */
export interface ProviderModels {
  provider: string;
  models: string[];
  error?: string | undefined;
}

/** What can be chosen: the set-up providers' models, and the variable each other provider needs. */
export interface ModelChoices {
  providers: ProviderModels[];
  unconfigured: Array<{ provider: string; variable: string }>;
}

export async function listModels(): Promise<ModelChoices> {
  const body = (await apiJson('/api/models')) as Json;
  return {
    providers: list(body, 'providers').map((item) => ({
      provider: String(item.provider),
      models: Array.isArray(item.models) ? item.models.map(String) : [],
      error: text(item.error),
    })),
    unconfigured: list(body, 'unconfigured').map((item) => ({
      provider: String(item.provider),
      variable: String(item.variable),
    })),
  };
}

/** Tool calls waiting for this user's decision (after a reload the stream no longer tells). */
export async function listPendingApprovals(): Promise<PendingApproval[]> {
  return list(await apiJson('/api/approvals'), 'approvals').map((item) => {
    const path = Array.isArray(item.path) ? (item.path as Json[]) : [];
    return {
      approvalId: String(item.approvalId),
      runId: String(item.runId),
      agent: text(path.at(-1)?.agent) ?? '',
      toolCallId: String(item.toolCallId),
      name: text(item.tool) ?? text(item.name) ?? '',
      input: item.input,
      expiresAt: number(item.expiresAt) ?? 0,
      path: path.map((step) => ({
        runId: String(step.runId),
        agent: text(step.agent) ?? '',
        ...(text(step.task) ? { task: text(step.task) } : {}),
      })),
      ...(text(item.warning) ? { warning: text(item.warning) } : {}),
    };
  });
}

export type DelegationMode = 'off' | 'delegate' | 'prefetch';

export interface Settings {
  delegationMode?: DelegationMode | undefined;
  /** The main agent's model, or null when none is configured. */
  model?: string | null | undefined;
  /** The CLI's explanation of how to set a model, when none is configured. */
  noModelMessage?: string | undefined;
  authRequired?: boolean | undefined;
  prefetch?: { agent: string; trigger: string } | undefined;
}

export async function getSettings(): Promise<Settings> {
  const body = await apiJson<Json>('/api/settings');
  const mode = body.delegationMode ?? body.delegation_mode;
  return {
    delegationMode: mode === 'off' || mode === 'delegate' || mode === 'prefetch' ? mode : undefined,
    prefetch:
      body.prefetch && typeof body.prefetch === 'object'
        ? {
            agent: String((body.prefetch as Json).agent ?? ''),
            trigger: String((body.prefetch as Json).trigger ?? ''),
          }
        : undefined,
    model: body.model === null ? null : text(body.model),
    noModelMessage: text(body.noModelMessage) ?? text((body.setup as Json | undefined)?.message),
  };
}

export async function updateSettings(change: {
  delegationMode: DelegationMode;
  prefetch?: { agent: string; trigger: string };
}): Promise<void> {
  await apiJson('/api/settings', { method: 'PATCH', json: change });
}

/** A sub-agent run of a stored tree, as the interrupted answer's notice lists it. */
export interface StoredChildRun {
  id: string;
  agent: string;
  task: string;
  status: string;
  summary: string;
}

/** The sub-agent runs directly under a stored tree's root (`GET /api/runs/:id`), in the order they ran. */
export async function storedChildRuns(rootRunId: string): Promise<StoredChildRun[]> {
  const tree = await apiJson<Json>(`/api/runs/${encodeURIComponent(rootRunId)}`);
  const children = Array.isArray(tree.children) ? (tree.children as Json[]) : [];
  return children.map((child) => ({
    id: String(child.id),
    agent: String(child.agent),
    task: text(child.task) ?? '',
    status: String(child.status),
    summary: text(child.summary) ?? '',
  }));
}

/**
 * `POST /api/runs/:id/messages {text}`: to a running run, a message that joins its next step (202
 * `{messageId}`); to a finished sub-agent run, its follow-up (202, the follow-up's tree).
 */
export function messageRun<T = { messageId: string }>(runId: string, text: string): Promise<T> {
  return apiJson<T>(`/api/runs/${encodeURIComponent(runId)}/messages`, { method: 'POST', json: { text } });
}
