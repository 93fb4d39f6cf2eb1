import type { ExternalVerdict } from "../awtl/trace-sink";
import type { AgentEvent, AgentPromptCommand, ApiErrorCode, AttributionRecord, JudgeResult, Result } from "../domain";
import type { OverlayVersionRef, StagedChange } from "../workspace/overlay";
import type { UsageTotals } from "./session-context";
import type { ForkOrigin, ForkSource } from "./session-fork";
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
  /** Undelivered queued messages, oldest first. */
  queue: { steering: string[]; followUp: string[] };
  /** The session and message this one was forked at; null when it is not a fork. */
  forkedFrom: ForkOrigin | null;
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
  /** An import's messages, only into a session with none yet (a repeated import fills it once). */
  fillMessages(records: unknown[]): SessionResult<{ filled: boolean }>;
  appendEvents(records: unknown[]): SessionResult<number[]>;
  /** Every message as JSONL, marked at its end. */
  loadMessages(): Promise<SessionResult<ReadableStream<Uint8Array>>>;
  loadEvents(afterSeq?: number): Promise<SessionResult<{ seq: number; event: AgentEvent }[]>>;
  exportJsonl(
    stream: "messages" | "events" | "trace",
    afterSeq?: number,
  ): Promise<SessionResult<{ body: ReadableStream<Uint8Array>; through: number }>>;
  /** The log's last seq: what `exportJsonl` would answer as `through` now, nothing read. */
  logThrough(): Promise<SessionResult<number>>;
  /** An external judge's verdict on one of the session's runs (AWTL). */
  judge(
    runId: string,
    verdict: ExternalVerdict,
    /** With a key, a repeat returns the first outcome instead of judging twice. */
    idempotencyKey?: string,
  ): Promise<SessionResult<{ judgeResult: JudgeResult; attribution: AttributionRecord | null }>>;
  /**
   * A page of the session's attributions, oldest first, after a seq (0: from the first), as the API's
   * JSON, written as its client reads (one of the session's downloads); marked at its end.
   */
  attributionsPage(afterSeq: number, limit: number): Promise<SessionResult<ReadableStream<Uint8Array>>>;
  /** What a replay of a run needs; null when the run is unknown (or predates recorded commands). */
  runInfo(runId: string): Promise<SessionResult<RunInfo | null>>;
  flush(): Promise<SessionResult<FlushSummary>>;
  abortRun(runId?: string): { aborted: boolean; runId: string | null };
  setTitle(title: string | null): Promise<SessionResult<SessionMeta>>;
  /** What a fork at `atMessageId` (default: the newest message) copies; `message_not_found` for an unknown id. */
  forkSource(atMessageId?: string): Promise<SessionResult<ForkSource>>;
  /** The bytes of the changes `forkSource` listed (`fork_source_changed` when one is no longer there as listed). */
  forkChangeBytes(refs: OverlayVersionRef[]): SessionResult<Uint8Array[]>;
  /** Keeps a part of a fresh fork's workspace changes sent by `attempt`, from position `from` on. */
  stageForkChanges(attempt: string, from: number, changes: StagedChange[]): SessionResult<null>;
  /** Fills a freshly created fork with its messages and the `staged` changes of `attempt`; a repeat changes nothing. */
  importFork(origin: ForkOrigin, messages: ReadableStream<Uint8Array>, attempt: string, staged: number): Promise<SessionResult<ForkOrigin>>;
  /** Removes a fork that was never filled (a fork that failed half-way); a filled one stays. */
  discardUnfilledFork(): Promise<void>;
  /** Removes the session's SQLite data and R2 objects (aborting its run); repeatable. */
  destroy(): Promise<void>;
  /** Withdraws an undelivered queued message (`queued_message_not_found` otherwise). */
  withdrawQueued(messageId: string): SessionResult<{ messageId: string }>;
  readFile(path: string): Promise<SessionResult<{ size: number; body: ReadableStream<Uint8Array> }>>;
  /** A file's size, for a HEAD: no stream, so no download's place. */
  fileSize(path: string): Promise<SessionResult<number>>;
  changes(): Promise<SessionResult<ReadableStream<Uint8Array>>>;
}

export interface RunInfo {
  command: AgentPromptCommand;
  /** Assistant turns recorded before the run (a replay of it skips them). */
  assistantOffset: number;
  workspaceId: string | null;
  /** The newest message before the run's prompt (null for the session's first run): a fork there has the workspace as the run found it. */
  parentMessageId: string | null;
}

/** The paths of the streaming endpoints inside the object (only the path of the URL matters). */
export const SESSION_STREAM_ORIGIN = "https://session.internal";
export const SESSION_STREAM_PATHS = {
  /** POST, body: PromptDelivery -> the events of the run that carries the prompt, as SSE (409 when busy and whenBusy is reject). */
  run: "/run",
  /** GET `?after=<seq>[&runId=]` -> the events after seq, then the live tail (of the active run, or of `runId`), then end. */
  events: "/events",
} as const;
