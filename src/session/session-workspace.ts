import { renderChanges } from "../workspace/changes";
import { SqliteOverlay } from "../workspace/overlay";
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
  ) {
    this.overlay = new SqliteOverlay(sql, { transaction: transactionSync });
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
