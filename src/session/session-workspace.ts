import { changedFileDiffs } from "../workspace/changes";
import { type OverlayVersionRef, SqliteOverlay, type StagedChange } from "../workspace/overlay";
import { openWorkspace, type SnapshotWorkspaceFs } from "../workspace/snapshot-workspace-fs";
import { textStream } from "../workspace/streams";

/**
 * The session's view of its workspace: the immutable snapshot plus this session's copy-on-write
 * overlay in the DO's SQLite. The view is opened once per object and reused, so every write goes
 * through it and its cached tree stays current.
 */
export class SessionWorkspace {
  private readonly overlay: SqliteOverlay;
  private opened: Promise<SnapshotWorkspaceFs> | null = null;

  constructor(
    sql: SqlStorage,
    transactionSync: <T>(fn: () => T) => T,
    private readonly bucket: R2Bucket,
    stamp: () => number = () => 0,
  ) {
    this.overlay = new SqliteOverlay(sql, { transaction: transactionSync, stamp });
  }

  /** Every change stamped at or below `maxStamp` (a log seq), in the order made, without its bytes (see SqliteOverlay). */
  versionRefsUpTo(maxStamp: number): OverlayVersionRef[] {
    return this.overlay.versionRefsUpTo(maxStamp);
  }

  /** The bytes of a listed change; null when it is no longer there as listed. */
  versionBytes(ref: OverlayVersionRef): Uint8Array | null {
    return this.overlay.versionBytes(ref);
  }

  /** Keeps a part of the changes a fork's attempt copies (see SqliteOverlay.stage). */
  stageChanges(attempt: string, from: number, changes: readonly StagedChange[]): void {
    this.overlay.stage(attempt, from, changes);
  }

  stagedComplete(attempt: string, count: number): boolean {
    return this.overlay.stagedComplete(attempt, count);
  }

  /** Replays the attempt's staged changes in order, each stamped by `stampOf` its message. */
  applyStagedChanges(attempt: string, stampOf: (stampKey: string | null) => number): void {
    this.overlay.applyStaged(attempt, stampOf);
  }

  /** The merged view; throws WorkspaceError `workspace_not_found` when the snapshot is gone or not the owner's. */
  open(workspaceId: string, owner: string | null): Promise<SnapshotWorkspaceFs> {
    this.opened ??= openWorkspace(this.bucket, workspaceId, this.overlay, owner).catch((err) => {
      this.opened = null;
      throw err;
    });
    return this.opened;
  }

  /** A file's size as the agent sees it (overlay first). */
  async fileSize(workspaceId: string, owner: string | null, path: string): Promise<number> {
    return (await this.open(workspaceId, owner)).fileSize(path);
  }

  /** A file as the agent sees it (overlay first), as a stream with its size. */
  async fileStream(
    workspaceId: string,
    owner: string | null,
    path: string,
  ): Promise<{ size: number; body: ReadableStream<Uint8Array>; changed: boolean }> {
    const fs = await this.open(workspaceId, owner);
    return fs.fileStream(path);
  }

  /**
   * Every change of this session as a unified diff against the snapshot, streamed file by file.
   * Once `deleted` says so the stream breaks off with an error: the overlay's rows are going, and the
   * files left would be skipped as unchanged, ending a diff that never was as if it were whole.
   */
  async changes(workspaceId: string, owner: string | null, deleted: () => boolean): Promise<ReadableStream<Uint8Array>> {
    const fs = await this.open(workspaceId, owner);
    return textStream(untilDeleted(changedFileDiffs(fs.snapshot, this.overlay), deleted));
  }
}

async function* untilDeleted(parts: AsyncGenerator<string>, deleted: () => boolean): AsyncGenerator<string> {
  for await (const part of parts) {
    if (deleted()) throw new Error("the session was deleted while its changes were read");
    yield part;
  }
  if (deleted()) throw new Error("the session was deleted while its changes were read");
}
