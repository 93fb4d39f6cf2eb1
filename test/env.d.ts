import type { AppEnv } from "../src/env";

// Types for `import { env, exports } from "cloudflare:workers"` in tests.
declare global {
  namespace Cloudflare {
    interface Env extends AppEnv {}
    interface GlobalProps {
      mainModule: typeof import("./helpers/test-worker");
      durableNamespaces: "SessionDO" | "TenantDO" | "ProjectDO";
    }
  }
}
