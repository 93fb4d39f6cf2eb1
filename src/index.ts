export { SessionDO } from "./session/session-do";
export default { fetch() { return new Response("ok"); } };
