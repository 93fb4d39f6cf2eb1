import { createApp } from "./api/app";

export { SessionDO } from "./session/session-do";
export { TenantDO } from "./tenant/tenant-do";

export default createApp();
