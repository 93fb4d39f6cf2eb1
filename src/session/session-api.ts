import type { ExternalVerdict } from "../awtl/trace-sink";
import type { AgentEvent, AgentMessage, AgentPromptCommand, ApiErrorCode, AttributionRecord, JudgeResult, Result } from "../domain";
import type { UsageTotals } from "./session-context";
import type { OwnedSessionMeta, SessionMeta } from "./session-meta";

/**
 * The contract of a session's Durable Object as the Worker sees it: its RPC methods and the two
 * streaming paths reached through `stub.fetch`. Types only, so the API and the environment can name
 * it without importing the object's implementation.
 */

export type SessionStatus = "idle" | "running";

export interface SessionInfo extends SessionMeta {
  status: SessionStatus;
  counts: { messages: number; events: number };
  /** Token and cost totals of the session; null when its log cannot be read now. */
  usage: UsageTotals | null;
  /** The estimated tokens of the next request, and the context window it is measured against. */
  contextTokens: number | null;
  contextWindow: number | null;
}

/** A session operation's outcome; failures carry a registry code and cross RPC as values. */
export type SessionResult<T> = Result<T, ApiErrorCode>;

export interface CreateSessionInput {
  id: string;
  workspaceId: string | null;
  projectId: string | null;
  title: string | null;
  owner: string | null;
  createdAt: string;
}

export interface FlushSummary {
  segmentsWritten: number;
  recordsFlushed: number;
  flushedSeq: number;
}

/** The RPC methods of SessionDO. */
export interface SessionRpc extends Rpc.DurableObjectBranded {
  create(input: CreateSessionInput): Promise<SessionResult<SessionMeta>>;
  /** The meta including the owner, or null when the object holds no session (nothing is created). */
  describe(): OwnedSessionMeta | null;
  info(): Promise<SessionInfo | null>;
  /** Compacts the history now (`POST .../compact`). */
  compact(instructions?: string): Promise<SessionResult<{ messageId: string; tokensBefore: number; tokensAfter: number }>>;
  appendMessages(records: unknown[]): SessionResult<number[]>;
  appendEvents(records: unknown[]): SessionResult<number[]>;
  loadMessages(): Promise<SessionResult<AgentMessage[]>>;
  loadEvents(afterSeq?: number): Promise<SessionResult<{ seq: number; event: AgentEvent }[]>>;
  exportJsonl(stream: "messages" | "events" | "trace"): Promise<SessionResult<ReadableStream<Uint8Array>>>;
  /** An external judge's verdict on one of the session's runs (AWTL). */
  judge(
    runId: string,
    verdict: ExternalVerdict,
  ): Promise<SessionResult<{ judgeResult: JudgeResult; attribution: AttributionRecord | null }>>;
  attributions(): Promise<SessionResult<AttributionRecord[]>>;
  /** What a replay of a run needs; null when the run is unknown (or predates recorded commands). */
  runInfo(runId: string): Promise<SessionResult<RunInfo | null>>;
  flush(): Promise<SessionResult<FlushSummary>>;
  abortRun(): { aborted: boolean; runId: string | null };
  readFile(path: string): Promise<SessionResult<Uint8Array>>;
  changes(): Promise<SessionResult<string>>;
}

export interface RunInfo {
  command: AgentPromptCommand;
  /** Assistant turns recorded before the run (a replay of it skips them). */
  assistantOffset: number;
  workspaceId: string | null;
}

/** The paths of the streaming endpoints inside the object (only the path of the URL matters). */
export const SESSION_STREAM_ORIGIN = "https://session.internal";
export const SESSION_STREAM_PATHS = {
  /** POST, body: AgentPromptCommand -> the run's events as SSE (409 when busy). */
  run: "/run",
  /** GET `?after=<seq>` -> the events after seq, then the live tail, then end. */
  events: "/events",
} as const;
