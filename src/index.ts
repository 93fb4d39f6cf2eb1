import { createApp } from "./api/app";

export { ProjectDO } from "./awtl/project-do";
export { SessionDO } from "./session/session-do";
export { TenantDO } from "./tenant/tenant-do";

export default createApp();
