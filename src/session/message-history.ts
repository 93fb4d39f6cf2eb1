import type { AgentMessage } from "../domain";
import { decodeStoredMessageLine } from "./jsonl";
import { type FlushedSource, readLogLines } from "./log-reader";
import type { SegmentBucket } from "./segment-flusher";
import type { SessionLog } from "./session-log";

/**
 * The messages a cold object loads for its next run: the newest from the copy SQLite keeps (`copy`; older
 * ones from R2 segments, read in parallel), each line checked structurally (this log validated it when
 * it was appended). `r2` reads every flushed line from R2, as an object from before the copy does.
 */
export async function loadStoredMessages(
  log: SessionLog,
  bucket: SegmentBucket,
  sessionId: string,
  source: FlushedSource = "copy",
): Promise<AgentMessage[]> {
  const lines = await readLogLines(log, bucket, "messages", 0, source);
  const messages = new Array<AgentMessage>(lines.length);
  for (let i = 0; i < lines.length; i++) messages[i] = decodeStoredMessageLine(lines[i]!.body, lines[i]!.seq, sessionId);
  return messages;
}

/**
 * The session's messages, loaded once and then kept current by the appends that follow. A load that
 * raced an append (the append landed while the load was reading R2) is not cached, so the cache never
 * misses a message.
 */
export class MessageHistory {
  private cache: AgentMessage[] | null = null;
  /** Bumped on every message append. */
  private version = 0;

  constructor(private readonly read: () => Promise<AgentMessage[]>) {}

  async load(): Promise<AgentMessage[]> {
    while (!this.cache) {
      const version = this.version;
      const loaded = await this.read();
      if (version === this.version) this.cache = loaded;
    }
    return [...this.cache];
  }

  appended(messages: readonly AgentMessage[]): void {
    this.version++;
    this.cache?.push(...messages);
  }
}
