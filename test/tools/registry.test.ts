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

  it("sends each tool's argument schema with the keywords every common provider takes, and the tools' own bounds only", () => {
    const sent = Object.fromEntries(BUILTIN_TOOLS.map((tool) => [tool.name, toolDefinition(tool).parameters]));
    expect(sent).toEqual({
      read: {
        type: "object",
        properties: {
          path: {
            type: "string",
            description: "Path of the file to read, relative to the workspace root",
          },
          offset: {
            description: "Line number to start reading from (1-based)",
            type: "integer",
            minimum: 0,
          },
          limit: {
            description: "Maximum number of lines to read",
            type: "integer",
            minimum: 1,
          },
        },
        required: ["path"],
      },
      ls: {
        type: "object",
        properties: {
          path: {
            description: "Directory to list, relative to the workspace root (default: the root)",
            type: "string",
          },
          offset: {
            description: "Number of the first entry to show (1-based), to continue a cut listing",
            type: "integer",
            minimum: 0,
          },
          limit: {
            default: 500,
            description: "Maximum number of entries to return",
            type: "integer",
            minimum: 1,
            maximum: 2000,
          },
        },
      },
      grep: {
        type: "object",
        properties: {
          pattern: {
            type: "string",
            description:
              "JavaScript regular expression (or literal text with literal=true); also takes POSIX classes such as [[:space:]] and a leading (?i)",
          },
          path: {
            description: "Directory or file to search, relative to the workspace root (default: the root)",
            type: "string",
          },
          glob: {
            description:
              "Only search files matching this glob. Without '/' it matches file names ('*.ts'); with '/' the path relative to path or to the workspace root ('src/**/*.ts')",
            type: "string",
          },
          ignoreCase: {
            description: "Case-insensitive search",
            type: "boolean",
          },
          literal: {
            description: "Treat pattern as literal text, not a regular expression",
            type: "boolean",
          },
          context: {
            description: "Lines of context before and after each match",
            type: "integer",
            minimum: 0,
            maximum: 20,
          },
          offset: {
            description: "Number of the first match to show (1-based), to continue a cut result",
            type: "integer",
            minimum: 0,
          },
          limit: {
            default: 100,
            description: "Maximum number of matches",
            type: "integer",
            minimum: 1,
            maximum: 1000,
          },
        },
        required: ["pattern"],
      },
      find: {
        type: "object",
        properties: {
          pattern: {
            type: "string",
            description:
              "Glob, e.g. '*.ts', 'src/**/*.test.ts' or '**/README*'. Without '/' it matches names; with '/' the path relative to path or to the workspace root",
          },
          path: {
            description: "Directory to search in, relative to the workspace root (default: the root)",
            type: "string",
          },
          offset: {
            description: "Number of the first result to show (1-based), to continue a cut list",
            type: "integer",
            minimum: 0,
          },
          limit: {
            default: 1000,
            description: "Maximum number of results",
            type: "integer",
            minimum: 1,
            maximum: 2000,
          },
        },
        required: ["pattern"],
      },
      write: {
        type: "object",
        properties: {
          path: {
            type: "string",
            description: "Path of the file to write, relative to the workspace root",
          },
          content: {
            type: "string",
            description: "The complete new content of the file",
          },
        },
        required: ["path", "content"],
      },
      edit: {
        type: "object",
        properties: {
          path: {
            type: "string",
            description: "Path of the file to edit, relative to the workspace root",
          },
          edits: {
            type: "array",
            description: "1-100 replacements, each matched against the file as it was before this call; they must not overlap",
            items: {
              type: "object",
              properties: {
                oldText: {
                  type: "string",
                  description: "Exact text to replace; must occur exactly once in the file as it was before this call",
                },
                newText: {
                  type: "string",
                  description: "Text to put in its place",
                },
              },
              required: ["oldText", "newText"],
            },
          },
        },
        required: ["path", "edits"],
      },
      bash: {
        type: "object",
        properties: {
          command: {
            type: "string",
            description: "Bash command line to run in the workspace directory",
          },
          timeoutMs: {
            description: "Timeout in milliseconds (default 10000, max 60000)",
            type: "integer",
            minimum: 1,
            maximum: 60000,
          },
        },
        required: ["command"],
      },
    });
  });

  it("sends no keyword but type, properties, required, description, enum, items, minimum, maximum and default", () => {
    const allowed = new Set(["type", "properties", "required", "description", "enum", "items", "minimum", "maximum", "default"]);
    const others: string[] = [];
    const walk = (schema: Record<string, unknown>, where: string) => {
      for (const [key, value] of Object.entries(schema)) {
        if (!allowed.has(key)) others.push(`${where}.${key}`);
        if (key === "properties") for (const [name, inner] of Object.entries(value as object)) walk(inner, `${where}.${name}`);
        if (key === "items") walk(value as Record<string, unknown>, `${where}[]`);
      }
    };
    for (const definition of toolDefinitions(BUILTIN_TOOLS, { ...safeRunOptions(), allowWrite: true, allowBash: true })) {
      walk(definition.parameters, definition.name);
    }
    expect(others).toEqual([]);
  });

  it("still refuses, through zod, what the sent schema leaves out: unknown keys, empty strings", () => {
    expect(byName("read").parameters.safeParse({ path: "a.txt", extra: 1 }).success).toBe(false);
    expect(byName("read").parameters.safeParse({ path: "" }).success).toBe(false);
    expect(byName("grep").parameters.safeParse({ pattern: "x", limit: 1001 }).success).toBe(false);
  });

  it("defaults fields without making them required", () => {
    const ls = toolDefinition(byName("ls")).parameters as { required?: string[]; properties: Record<string, { default?: unknown }> };
    expect(ls.required).toBeUndefined();
    expect(ls.properties.limit?.default).toBe(500);
  });

  it("states the run's byte limit, the same for the same budget, in the descriptions of the tools that cut their output", () => {
    const options = { ...safeRunOptions(), allowWrite: true, allowBash: true };
    const described = (maxOutputBytes?: number) =>
      Object.fromEntries(toolDefinitions(BUILTIN_TOOLS, options, { maxOutputBytes }).map((d) => [d.name, d.description]));
    // A 32k-token window gives 25,600 bytes a result, of which the tools leave 1 KB for their notices.
    const small = described(25_600);
    expect(small.read).toContain("Output is truncated to 2000 lines or 24.0KB (whichever is hit first)");
    expect(small.ls).toContain("and 24.0KB of output;");
    expect(small.grep).toContain("lines cut at 500 characters, 24.0KB of output;");
    expect(small.find).toContain("and 24.0KB of output;");
    expect(small.bash).toContain("truncated to the last 2000 lines or 24.0KB.");
    expect(Object.entries(small).filter(([, text]) => text.includes("50.0KB"))).toEqual([]);
    expect(described(25_600)).toEqual(small);
    expect(described(51_200).read).toContain("2000 lines or 49.0KB");
    // Without a run budget: each tool's own limit; write and edit state no output limit.
    expect(described().read).toContain("2000 lines or 50.0KB");
    expect([small.write, small.edit]).toEqual([byName("write").description, byName("edit").description]);
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
