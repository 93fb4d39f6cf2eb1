/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

/**
 * Which parts of src/ each part may import, besides itself. A part is a folder, or a top-level file
 * (`index`, `env`). The layers, each importing only to its right:
 *   api -> tenant, session -> runtime -> tools -> workspace -> domain
 *   runtime -> model -> domain;  session -> model (config types);  tenant -> domain
 *   session -> awtl -> workspace (path globs), domain: the failure-learning loop is pure rules plus its own
 *   Durable Object; the session feeds it trace records and asks it for briefs.
 * `env` (the Worker's bindings) is types only; the parts that read bindings may import it. `log` (the
 * structured log line) and `r2` (bucket helpers) sit below every part but `domain`, which stays
 * platform-neutral.
 */
const ALLOWED: Record<string, readonly string[] | "anything"> = {
  index: "anything",
  env: "anything",
  api: ["tenant", "session", "awtl", "runtime", "model", "tools", "workspace", "domain", "env", "log", "r2"],
  tenant: ["domain", "env", "log", "r2"],
  // A session store lists each new session in its tenant's index (tenant sits below session).
  session: ["tenant", "awtl", "runtime", "model", "tools", "workspace", "domain", "env", "log", "r2"],
  awtl: ["workspace", "domain", "env", "log", "r2"],
  runtime: ["model", "tools", "workspace", "domain", "log"],
  model: ["domain", "log"],
  tools: ["workspace", "domain", "log"],
  workspace: ["domain", "log", "r2"],
  domain: [],
  // The structured log line, for every part that logs; it imports nothing.
  log: [],
  // Helpers over an R2 bucket for the parts that store objects; they import nothing.
  r2: [],
};

interface Import {
  from: string;
  /** The imported module, resolved to a path under the repository root (no extension). */
  to: string;
  typeOnly: boolean;
}

const IMPORT = /(?:^|[;\n])\s*(import|export)\s+(type\s+)?(?:[^;"']*?\s+from\s+)?["']([^"']+)["']/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** Relative imports of one file: static (`import`, `export ... from`, multi-line too) and dynamic. */
function importsOf(file: string, source: string): Import[] {
  const found: Import[] = [];
  for (const [, , type, spec] of source.matchAll(IMPORT)) found.push({ from: file, to: spec!, typeOnly: type !== undefined });
  for (const [, spec] of source.matchAll(DYNAMIC_IMPORT)) found.push({ from: file, to: spec!, typeOnly: false });
  return found.filter((i) => i.to.startsWith(".")).map((i) => ({ ...i, to: resolve(file, i.to) }));
}

function resolve(file: string, spec: string): string {
  const parts = file.split("/").slice(0, -1);
  for (const segment of spec.split("/")) {
    if (segment === "..") parts.pop();
    else if (segment !== ".") parts.push(segment);
  }
  return parts.join("/").replace(/\.(ts|js)$/, "");
}

/** `src/session/x` -> `session`, `src/env` -> `env`; null outside src/. */
function partOf(path: string): string | null {
  const [root, first, second] = path.split("/");
  if (root !== "src" || first === undefined) return null;
  return second === undefined ? first.replace(/\.ts$/, "") : first;
}

/** Every import that breaks a rule, as `file -> target` or with the reason. */
function violations(files: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [file, source] of Object.entries(files)) {
    const part = partOf(file)!;
    const allowed = ALLOWED[part];
    for (const { to, typeOnly } of importsOf(file, source)) {
      const target = partOf(to);
      if (target === null) out.push(`${file} -> ${to} (outside src/)`);
      else if (allowed === undefined) out.push(`${file} -> ${to} (no rule for '${part}')`);
      else if (target !== part && allowed !== "anything" && !allowed.includes(target)) out.push(`${file} -> ${to}`);
      else if ((target === "env" || part === "env") && target !== part && !typeOnly) out.push(`${file} -> ${to} (env is types only)`);
    }
  }
  return out.sort();
}

/** Every file under src/, keyed `src/...`. */
function sourceFiles(): Record<string, string> {
  const raw = import.meta.glob<string>("../../src/**/*.ts", { query: "?raw", import: "default", eager: true });
  return Object.fromEntries(Object.entries(raw).map(([key, text]) => [key.replace(/^(\.\.\/)+/, ""), text]));
}

describe("dependency directions in src/", () => {
  const files = sourceFiles();

  it("reads every source file and its imports", () => {
    expect(importsOf("src/index.ts", files["src/index.ts"]!).map((i) => i.to)).toEqual([
      "src/api/app",
      "src/awtl/project-do",
      "src/session/session-do",
      "src/tenant/tenant-do",
    ]);
    expect(importsOf("src/tools/bash.ts", files["src/tools/bash.ts"]!).map((i) => i.to)).toContain("src/tools/bash-fs");
  });

  it("has a rule for every part of src/, and every rule is about a part that exists", () => {
    const parts = [...new Set(Object.keys(files).map((f) => partOf(f)!))].sort();
    expect(parts).toEqual(Object.keys(ALLOWED).sort());
  });

  it("imports only in the allowed directions", () => {
    expect(violations(files)).toEqual([]);
  });
});

describe("the dependency check itself", () => {
  it("finds a forbidden import in every form: named, multi-line, re-export, side effect, dynamic", () => {
    const found = violations({
      "src/domain/a.ts": 'import { x } from "../session/x";\nimport {\n  y,\n  z,\n} from "../tools/y";',
      "src/workspace/b.ts": 'export * from "../runtime/r";\nimport "../api/app";\nconst m = await import("../model/m");',
      "src/tools/c.ts": 'import type { T } from "../../test/helpers/t";\nimport { ok } from "./d";\nimport { z } from "zod";',
    });
    expect(found).toEqual([
      "src/domain/a.ts -> src/session/x",
      "src/domain/a.ts -> src/tools/y",
      "src/tools/c.ts -> test/helpers/t (outside src/)",
      "src/workspace/b.ts -> src/api/app",
      "src/workspace/b.ts -> src/model/m",
      "src/workspace/b.ts -> src/runtime/r",
    ]);
  });

  it("allows only type imports of env, and only types in env", () => {
    const found = violations({
      "src/session/a.ts": 'import type { AppEnv } from "../env";',
      "src/tenant/b.ts": 'import { AppEnv } from "../env";',
      "src/env.ts": 'import type { SessionRpc } from "./session/session-api";\nimport { TenantDO } from "./tenant/tenant-do";',
    });
    expect(found).toEqual(["src/env.ts -> src/tenant/tenant-do (env is types only)", "src/tenant/b.ts -> src/env (env is types only)"]);
  });

  it("lets only src/index.ts import api", () => {
    const found = violations({
      "src/index.ts": 'import { createApp } from "./api/app";',
      "src/session/s.ts": 'import { x } from "../api/errors";',
    });
    expect(found).toEqual(["src/session/s.ts -> src/api/errors"]);
  });
});
