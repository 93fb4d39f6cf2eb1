import type { AgentMessage } from "../domain";
import type { OverlayVersion } from "../workspace/overlay";

/** Where a fork came from. */
export interface ForkOrigin {
  sessionId: string;
  messageId: string | null;
}

/** A change of the source's workspace as a fork imports it: stamped by a message instead of a seq. */
export interface ForkedChange extends Omit<OverlayVersion, "stamp"> {
  /** The first copied message at or after the change (null: made before any message). */
  stampMessageId: string | null;
}

/** What a fork copies from its source: committed messages up to one, and the workspace changes made up to it. */
export interface ForkSource {
  atMessageId: string | null;
  messages: AgentMessage[];
  changes: ForkedChange[];
  workspaceId: string | null;
  projectId: string | null;
  title: string | null;
}

/**
 * The messages up to and including `atMessageId` (default: the newest), and every overlay change
 * stamped at or below that message's seq, each restamped with the first message at or after it. In
 * the fork the messages get new seqs, and a change gets its message's new seq as its stamp, so a fork
 * of the fork at an earlier message again sees exactly the changes made up to that message.
 */
export function forkSource(
  messages: { seq: number; message: AgentMessage }[],
  atMessageId: string | undefined,
  versionsUpTo: (maxStamp: number) => OverlayVersion[],
  lastSeq: number,
): { ok: true; source: Omit<ForkSource, "workspaceId" | "projectId" | "title"> } | { ok: false } {
  const at = atMessageId === undefined ? messages.length - 1 : messages.findIndex((m) => m.message.id === atMessageId);
  if (atMessageId !== undefined && at < 0) return { ok: false };
  const copied = messages.slice(0, at + 1);
  const maxStamp = at < 0 ? lastSeq : copied[at]!.seq;
  const changes = versionsUpTo(maxStamp).map(({ stamp, ...change }) => ({
    ...change,
    stampMessageId: stamp === 0 ? null : (copied.find((m) => m.seq >= stamp)?.message.id ?? copied.at(-1)?.message.id ?? null),
  }));
  return { ok: true, source: { atMessageId: copied.at(-1)?.message.id ?? null, messages: copied.map((m) => m.message), changes } };
}

/** Where this session was forked from (table `fork_origin`, one row in a fork, none otherwise). */
export class ForkOriginTable {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS fork_origin (session_id TEXT NOT NULL, message_id TEXT)`);
  }

  get(): ForkOrigin | null {
    const row = this.sql.exec<{ session_id: string; message_id: string | null }>(`SELECT * FROM fork_origin`).toArray()[0];
    return row ? { sessionId: row.session_id, messageId: row.message_id } : null;
  }

  set(origin: ForkOrigin): void {
    this.sql.exec(`INSERT INTO fork_origin (session_id, message_id) VALUES (?, ?)`, origin.sessionId, origin.messageId);
  }
}
