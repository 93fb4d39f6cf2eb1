import { type AgentEvent, eventJsonWithSeq } from "../domain";
import {
  MAX_STALLED_EVENT_STREAMS_PER_ISOLATE,
  MAX_STALLED_EVENT_STREAMS_PER_SESSION,
  SSE_STALL_GRACE_MS,
  SSE_STALLED_STREAM_MS,
} from "../domain/limits";
import { StalledStreams } from "../workspace/stalled-streams";
import { SSE_PING, SSE_PING_INTERVAL_MS, SSE_RETRY, sseFrame } from "./sse";

/** The committed events a stream catches up on, batch by batch (a segment at a time), read as the client reads them. */
export type Replay = () => AsyncIterable<readonly SeqEvent[]>;

export interface SeqEvent {
  seq: number;
  event: AgentEvent;
  /** The event's JSON as the log stored it, when at hand (a live append): not encoded again per stream. */
  json?: string;
}

/** Events that end a run; a live stream closes after one. */
export const TERMINAL_EVENTS: ReadonlySet<AgentEvent["type"]> = new Set(["agent_completed", "agent_error"]);

const encoder = new TextEncoder();
/** A chunk leaves early once this many characters of frames are waiting. */
export const SSE_CHUNK_MAX_CHARS = 64 * 1024;
/** A replay sends on only while its client has read all but this many bytes. */
export const SSE_REPLAY_AHEAD_BYTES = 256 * 1024;
/**
 * A stream whose client has left this many bytes unread is ended with an error (the client resumes
 * from its Last-Event-ID): frames nobody reads would otherwise pile up in the isolate.
 */
export const SSE_MAX_UNREAD_BYTES = 4 * 1024 * 1024;
/** The size counted for a live event held behind a replay when its JSON is not at hand. */
const BUFFERED_EVENT_CHARS_GUESS = 256;

const unreadError = () => new Error(`the client left more than ${SSE_MAX_UNREAD_BYTES} bytes unread; resume from Last-Event-ID`);

/** The stalled streams of every session in this isolate. */
export const isolateStalledStreams = new StalledStreams(
  MAX_STALLED_EVENT_STREAMS_PER_ISOLATE,
  `more than ${MAX_STALLED_EVENT_STREAMS_PER_ISOLATE} event streams went unread on this server and this one longest; resume from Last-Event-ID`,
);

/**
 * Fans committed events out to live SSE streams. A stream opens with its `retry:` delay, replays the log after its
 * `Last-Event-ID`, then tails the active run, then ends. It subscribes before reading the log and
 * drops anything at or below the last seq it sent, so no event is missed or sent twice.
 */
export class EventHub {
  private readonly streams = new Set<LiveEventStream>();
  /** This session's streams whose clients stopped reading. */
  private readonly stalled: StalledStreams;

  /**
   * At most `maxStalled` streams stay stalled (nothing read for `stallGraceMs` with a full queue),
   * and at most `isolate.max` of all sessions together: each holds megabytes of the isolate (see
   * MAX_STALLED_EVENT_STREAMS_PER_SESSION). Streams that are read, or wait for a queued run, are
   * not counted, so a client may follow many queued prompts at once.
   */
  constructor(
    readonly maxStalled = MAX_STALLED_EVENT_STREAMS_PER_SESSION,
    private readonly stallGraceMs = SSE_STALL_GRACE_MS,
    private readonly isolate = isolateStalledStreams,
  ) {
    this.stalled = new StalledStreams(
      maxStalled,
      `more than ${maxStalled} of the session's event streams went unread and this one longest; resume from Last-Event-ID`,
    );
  }

  /** Called after each committed event append. */
  publish(item: SeqEvent): void {
    for (const stream of this.streams) stream.deliver(item);
  }

  /**
   * Ends every stream that has caught up and whose run is over: `waiting(runId)` says whether a run
   * is still active or queued (a follow-up's stream waits through the runs before it).
   */
  closeAll(waiting: (runId: string) => boolean = () => false): void {
    for (const stream of this.streams) if (!stream.waitsFor(waiting)) stream.endIfLive();
  }

  /** Ends the run-scoped streams whose run will never come (its queued message was withdrawn). */
  endAbandoned(waiting: (runId: string) => boolean): void {
    for (const stream of this.streams) if (stream.scoped && !stream.waitsFor(waiting)) stream.endIfLive();
  }

  get size(): number {
    return this.streams.size;
  }

  /** Streams counted as stalled now. */
  get stalledCount(): number {
    return this.stalled.size;
  }

  /**
   * A new SSE byte stream. `replay` reads the committed events after `afterSeq`; `runActive` says,
   * when the replay has been sent, whether to keep tailing; `scope` ties the stream to one run.
   * `ready` settles once the replay's first batch is read: it rejects, and the stream is closed, when
   * the log cannot be read, so the caller can answer with an error status instead of a 200 that
   * ends at once (an EventSource would reconnect to that for ever).
   */
  open(
    afterSeq: number,
    replay: Replay,
    runActive: () => boolean,
    scope: StreamScope = { runId: null, skipFromSeq: null },
  ): { body: ReadableStream<Uint8Array>; ready: Promise<void> } {
    const stream = new LiveEventStream(afterSeq, scope, {
      graceMs: this.stallGraceMs,
      detach: () => {
        this.streams.delete(stream);
        this.unstall(stream);
      },
      stalled: (stalls) => (stalls ? this.stall(stream) : this.unstall(stream)),
    });
    this.streams.add(stream);
    const body = stream.start(replay, runActive);
    return { body, ready: stream.ready };
  }

  private stall(stream: LiveEventStream): void {
    this.stalled.add(stream);
    // Unless the session's bound has just ended it.
    if (!stream.ended) this.isolate.add(stream);
  }

  private unstall(stream: LiveEventStream): void {
    this.stalled.delete(stream);
    this.isolate.delete(stream);
  }
}

/** What a stream reports to its hub. */
interface StreamHooks {
  graceMs: number;
  /** The stream has ended. */
  detach: () => void;
  /** Its client stopped reading (true) or reads again (false). */
  stalled: (stalls: boolean) => void;
}

/**
 * The run a stream belongs to. With `runId` the stream ends at that run's terminal event (replayed or
 * live) and not at another's. With `skipFromSeq` (a queued follow-up) the events after that seq are
 * skipped until the run's `agent_started`: they belong to the runs before it. With `steerMessageId`
 * (a steer) the stream follows that message: if the run ends before taking it, it becomes a
 * follow-up with a run of its own (`message_queued`, mode followUp), and the stream goes on to that
 * run's end. The stream updates its scope in place as it follows.
 */
export interface StreamScope {
  runId: string | null;
  skipFromSeq: number | null;
  steerMessageId?: string | null;
}

class LiveEventStream {
  /** The scoped run's agent_started has been seen (or there is nothing to skip). */
  private started: boolean;

  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private buffered: SeqEvent[] | null = [];
  private bufferedChars = 0;
  private lastSent: number;
  private ping: ReturnType<typeof setInterval> | null = null;
  private closed = false;
  /** Frames written since the last chunk left. */
  private pending = "";
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Closed by a terminal event: the stream ends once the pending frames are out. */
  private ending = false;
  /** The replay waiting for its client to read (resolved by the stream's next pull, or the close). */
  private room: (() => void) | null = null;
  /** Settles once the replay's first batch is read (`EventHub.open`). */
  readonly ready: Promise<void>;
  private settleReady!: (error?: Error) => void;
  /** While the client is behind: bytes queued when the watch began, and enqueued since. */
  private watch: { timer: ReturnType<typeof setTimeout>; queued: number; enqueued: number } | null = null;
  /** Looks in a row (one per grace period) that found nothing read. */
  private idleLooks = 0;

  constructor(
    afterSeq: number,
    private readonly scope: StreamScope,
    private readonly hooks: StreamHooks,
  ) {
    this.lastSent = afterSeq;
    this.started = scope.skipFromSeq === null;
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (error) => (error ? reject(error) : resolve());
    });
    // Awaited by the caller; a rejection nobody awaits yet must not count as unhandled.
    this.ready.catch(() => {});
  }

  get ended(): boolean {
    return this.closed;
  }

  get scoped(): boolean {
    return this.scope.runId !== null;
  }

  waitsFor(waiting: (runId: string) => boolean): boolean {
    return this.scope.runId !== null && waiting(this.scope.runId);
  }

  start(replay: Replay, runActive: () => boolean): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          this.write(SSE_RETRY);
          this.ping = setInterval(() => this.write(SSE_PING), SSE_PING_INTERVAL_MS);
          void this.catchUp(replay, runActive);
        },
        pull: () => {
          this.caughtUp();
          this.makeRoom();
        },
        cancel: () => this.close(false),
      },
      // Counted in bytes: desiredSize is then how far ahead of the client the stream is.
      { highWaterMark: SSE_REPLAY_AHEAD_BYTES, size: (chunk) => chunk.byteLength },
    );
  }

  deliver(item: SeqEvent): void {
    if (!this.buffered) return this.send(item);
    // Held until the replay reaches them: a client that stopped reading mid-replay would otherwise
    // keep every event of the runs after it in the isolate, for as long as it stays connected.
    this.buffered.push(item);
    this.bufferedChars += item.json?.length ?? BUFFERED_EVENT_CHARS_GUESS;
    if (this.bufferedChars > SSE_MAX_UNREAD_BYTES) this.fail(unreadError());
  }

  /** Live events the replay has sent meanwhile are held no longer: only those past it count. */
  private dropReplayed(): void {
    const buffered = this.buffered;
    if (!buffered) return;
    let sent = 0;
    while (sent < buffered.length && buffered[sent]!.seq <= this.lastSent) {
      this.bufferedChars -= buffered[sent]!.json?.length ?? BUFFERED_EVENT_CHARS_GUESS;
      sent++;
    }
    if (sent > 0) buffered.splice(0, sent);
  }

  endIfLive(): void {
    if (this.buffered === null) this.close(true);
  }

  private async catchUp(replay: Replay, runActive: () => boolean): Promise<void> {
    let first = true;
    try {
      // At the client's pace (write() enqueues full chunks), and the log read a batch at a time: a
      // replay of a long log all at once would sit in memory unread.
      for await (const batch of replay()) {
        if (first) {
          first = false;
          this.settleReady();
        }
        for (const item of batch) {
          this.send(item);
          if (!this.closed && (this.controller.desiredSize ?? 1) <= 0) await this.waitForRoom();
        }
        if (this.closed) break;
        this.dropReplayed();
      }
    } catch (err) {
      if (!first) return this.fail(err as Error);
      // Nothing has gone out but `retry:`: the caller answers with the error instead of this stream.
      this.settleReady(err as Error);
      this.buffered = null;
      return this.close(false);
    }
    this.settleReady();
    const live = this.buffered ?? [];
    this.buffered = null;
    for (const item of live) this.send(item);
    if (!this.closed && !runActive()) this.close(true);
  }

  private send({ seq, event, json }: SeqEvent): void {
    if (this.closed || seq <= this.lastSent) return;
    this.lastSent = seq;
    this.followSteer(seq, event);
    const { runId, skipFromSeq } = this.scope;
    const frame = () => sseFrame(seq, "agent_event", eventJsonWithSeq(seq, json ?? JSON.stringify(event)));
    if (!this.started && skipFromSeq !== null && seq > skipFromSeq) {
      // Its message left the queue: the run will never come, and the stream says why it ends.
      if (event.type === "queued_message_withdrawn" && event.runId === runId) {
        this.write(frame());
        return this.close(true);
      }
      if (event.type !== "agent_started" || event.runId !== runId) return;
      this.started = true;
    }
    this.write(frame());
    if (!TERMINAL_EVENTS.has(event.type)) return;
    // A scoped stream ends at its run's terminal event, replayed or live; an unscoped one only at a
    // live terminal event (one met during replay may belong to an older run).
    const ends = runId !== null ? "runId" in event && event.runId === runId && !this.scope.steerMessageId : this.buffered === null;
    if (ends) this.close(true);
  }

  /** A steer's stream: its message was taken by the run or withdrawn (follow the run to its end), or became a follow-up (follow that). */
  private followSteer(seq: number, event: AgentEvent): void {
    const steer = this.scope.steerMessageId;
    if (!steer || !("messageId" in event) || event.messageId !== steer) return;
    if (event.type === "user_message_appended" || event.type === "queued_message_withdrawn") this.scope.steerMessageId = null;
    else if (event.type === "message_queued" && event.mode === "followUp") {
      this.scope.runId = event.runId;
      this.scope.skipFromSeq = seq;
      this.scope.steerMessageId = null;
      this.started = false;
    }
  }

  /**
   * Frames written during one task leave as one chunk, in a timer task; a stream ends in that task
   * too, never in the synchronous stretch that enqueued its last frames. A run appends thousands of
   * small frames in bursts, and ending a stream right behind such a burst left wrangler dev's proxy
   * connection unusable for the next request (docs/architecture.md, "Local runtime artefacts").
   */
  private write(text: string): void {
    if (this.closed) return;
    this.pending += text;
    if (this.pending.length >= SSE_CHUNK_MAX_CHARS) this.enqueuePending();
    this.timer ??= setTimeout(() => this.onTimer(), 0);
  }

  private enqueuePending(): void {
    if (this.pending === "") return;
    const chunk = encoder.encode(this.pending);
    this.controller.enqueue(chunk);
    this.pending = "";
    if (this.watch) this.watch.enqueued += chunk.byteLength;
    if (!this.ending && (this.controller.desiredSize ?? 0) < SSE_REPLAY_AHEAD_BYTES - SSE_MAX_UNREAD_BYTES) return this.fail(unreadError());
    if (!this.closed && (this.controller.desiredSize ?? 0) <= 0) this.watchReads();
  }

  /** Bytes waiting for the client. */
  private get queued(): number {
    return SSE_REPLAY_AHEAD_BYTES - (this.controller.desiredSize ?? SSE_REPLAY_AHEAD_BYTES);
  }

  /**
   * The queue is full: the stream counts as stalled if its client reads nothing for the grace
   * period. A pull ends the watch; a client far behind reads without a pull, which the shrinking
   * queue shows when the watch looks again.
   */
  private watchReads(): void {
    if (!this.watch) this.armWatch();
  }

  private armWatch(): void {
    this.watch = { timer: setTimeout(() => this.look(), this.hooks.graceMs), queued: this.queued, enqueued: 0 };
  }

  /**
   * Stalled if the client read nothing since the watch began, and ended once it has read nothing
   * for SSE_STALLED_STREAM_MS; watched again while the queue stays full.
   */
  private look(): void {
    if (this.closed || !this.watch) return;
    const read = this.watch.queued + this.watch.enqueued - this.queued;
    this.idleLooks = read > 0 ? 0 : this.idleLooks + 1;
    if (this.idleLooks * this.hooks.graceMs >= SSE_STALLED_STREAM_MS) {
      return this.fail(new Error(`the client read nothing for ${SSE_STALLED_STREAM_MS / 1000} s; resume from Last-Event-ID`));
    }
    this.hooks.stalled(read <= 0);
    if (!this.closed) this.armWatch();
  }

  /** The client has read what was queued (the stream's pull): it neither is nor may become stalled. */
  private caughtUp(): void {
    if (!this.watch) return;
    clearTimeout(this.watch.timer);
    this.watch = null;
    this.idleLooks = 0;
    this.hooks.stalled(false);
  }

  /** Ends the stream with `error`, which its client gets in place of what it has not read. */
  fail(error: Error): void {
    if (this.closed) return;
    this.buffered = null;
    this.controller.error(error);
    this.close(false);
  }

  /**
   * Until the client reads (the stream's next pull) or the stream closes. The queue is full, so the
   * read watch is on: a client that reads nothing is let go (`look`).
   */
  private waitForRoom(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.room = resolve;
    });
  }

  private makeRoom(): void {
    const room = this.room;
    this.room = null;
    room?.();
  }

  private onTimer(): void {
    this.timer = null;
    this.enqueuePending();
    if (this.ending) this.controller.close();
  }

  private close(endStream: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.makeRoom();
    if (this.ping) clearInterval(this.ping);
    if (this.watch) clearTimeout(this.watch.timer);
    this.watch = null;
    this.hooks.detach();
    if (endStream) {
      this.ending = true;
      this.timer ??= setTimeout(() => this.onTimer(), 0);
    } else if (this.timer) {
      // Cancelled or errored: nothing more may be enqueued.
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}
