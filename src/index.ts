import { createApp } from "./api/app";

export { SessionDO } from "./session/session-do";

export default createApp();
