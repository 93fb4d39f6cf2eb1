import { renderChanges } from "../workspace/changes";
import { type OverlayVersion, SqliteOverlay } from "../workspace/overlay";
import { resolveWorkspacePath } from "../workspace/paths";
import { openWorkspace, type SnapshotWorkspaceFs } from "../workspace/snapshot-workspace-fs";

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

  /** Every change stamped at or below `maxStamp` (a log seq), in the order made (see SqliteOverlay). */
  versionsUpTo(maxStamp: number): OverlayVersion[] {
    return this.overlay.versionsUpTo(maxStamp);
  }

  /** Replays changes in order with the given stamps (a fork importing its source's workspace). */
  importChanges(changes: OverlayVersion[]): void {
    for (const change of changes) {
      if (change.deleted) this.overlay.whiteout(change.path, change.stamp);
      else this.overlay.put(change.path, change.bytes, change.mode, change.stamp);
    }
  }

  /** The merged view; throws WorkspaceError `workspace_not_found` when the snapshot is gone or not the owner's. */
  open(workspaceId: string, owner: string | null): Promise<SnapshotWorkspaceFs> {
    this.opened ??= openWorkspace(this.bucket, workspaceId, this.overlay, owner).catch((err) => {
      this.opened = null;
      throw err;
    });
    return this.opened;
  }

  /** A file as the agent sees it (overlay first). */
  async readFile(workspaceId: string, owner: string | null, path: string): Promise<Uint8Array> {
    const fs = await this.open(workspaceId, owner);
    return fs.readFile(resolveWorkspacePath(path));
  }

  /** Every change of this session as a unified diff against the snapshot. */
  async changes(workspaceId: string, owner: string | null): Promise<string> {
    const fs = await this.open(workspaceId, owner);
    return renderChanges(fs.snapshot, this.overlay);
  }
}
