import { describe, expect, it } from "vitest";
import { safeRunOptions } from "../../src/domain/run";
import { BUILTIN_TOOLS, toolDefinition, toolDefinitions } from "../../src/tools/registry";

const byName = (name: string) => {
  const tool = BUILTIN_TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(name);
  return tool;
};

describe("registry", () => {
  it("has the seven built-in tools; only write and edit mutate; only bash needs bash", () => {
    expect(BUILTIN_TOOLS.map((t) => [t.name, t.mutates, t.needsBash ?? false])).toEqual([
      ["read", false, false],
      ["ls", false, false],
      ["grep", false, false],
      ["find", false, false],
      ["write", true, false],
      ["edit", true, false],
      ["bash", false, true],
    ]);
  });

  it("derives the JSON Schema from the zod schema, defaulted fields optional, no $schema key", () => {
    expect(toolDefinition(byName("read")).parameters).toEqual({
      type: "object",
      properties: {
        path: { type: "string", minLength: 1, description: "Path of the file to read, relative to the workspace root" },
        offset: {
          type: "integer",
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
          description: "Line number to start reading from (1-based)",
        },
        limit: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Maximum number of lines to read" },
      },
      required: ["path"],
      additionalProperties: false,
    });
    const ls = toolDefinition(byName("ls")).parameters as { required?: string[]; properties: Record<string, { default?: unknown }> };
    expect(ls.required).toBeUndefined();
    expect(ls.properties.limit?.default).toBe(500);
  });

  it("states the limits in every description", () => {
    const descriptions = Object.fromEntries(
      toolDefinitions(BUILTIN_TOOLS, { ...safeRunOptions(), allowWrite: true, allowBash: true }).map((d) => [d.name, d.description]),
    );
    expect(descriptions.read).toContain("2000 lines or 50.0KB");
    expect(descriptions.ls).toContain("At most 500 entries");
    expect(descriptions.grep).toContain("At most 100 matches");
    expect(descriptions.grep).toContain("lines cut at 500 characters");
    expect(descriptions.grep).toContain("Skips .git/, paths ignored by .gitignore");
    expect(descriptions.find).toContain("At most 1000 results");
    expect(descriptions.find).toContain("Skips .git/ and paths ignored by .gitignore");
    expect(descriptions.write).toContain("At most 16.0MB per file");
    expect(descriptions.edit).toContain("exactly once");
    expect(descriptions.bash).toContain("Timeout 10s by default (timeoutMs, max 60s)");
    expect(descriptions.bash).toContain("not available: tar, gzip");
    expect(descriptions.bash).toContain("last 2000 lines or 50.0KB");
  });
});
