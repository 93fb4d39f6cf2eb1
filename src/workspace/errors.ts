/** Stable codes of workspace failures; tools and routes pass them on unchanged. */
export type WorkspaceErrorCode =
  | "path_escape"
  | "path_too_long"
  | "not_found"
  | "is_directory"
  | "not_a_directory"
  | "file_too_large"
  | "workspace_not_found";

export class WorkspaceError extends Error {
  override readonly name = "WorkspaceError";
  constructor(
    readonly code: WorkspaceErrorCode,
    message: string,
  ) {
    super(message);
  }
}
