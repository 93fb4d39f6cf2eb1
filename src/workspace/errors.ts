import { HarnessError } from "../domain/errors";

/** Stable codes of workspace failures; tools and routes pass them on unchanged. */
export type WorkspaceErrorCode =
  | "path_escape"
  | "path_too_long"
  | "not_found"
  | "is_directory"
  | "not_a_directory"
  | "file_too_large"
  | "workspace_full"
  | "workspace_not_found";

export class WorkspaceError extends HarnessError<WorkspaceErrorCode> {
  override readonly name = "WorkspaceError";
}
