import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { findTool } from "../../src/tools/find";
import { compileGlob } from "../../src/tools/glob";
import { fixtureFs, MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

const find = (fs: MemoryWorkspaceFs, args: { pattern: string; path?: string; offset?: number; limit?: number }, maxOutputBytes?: number) =>
  findTool.execute(
    findTool.parameters.parse(args),
    maxOutputBytes === undefined ? toolContext(fs) : { ...toolContext(fs), maxOutputBytes },
  );

describe("find", () => {
  it("matches a slash-free glob against names at any depth, skipping ignored files", async () => {
    // src/lib/generated.ts (nested .gitignore) and node_modules are left out.
    expect(await find(fixtureFs(), { pattern: "*.ts" })).toEqual({
      error: false,
      text: "src/index.ts\nsrc/lib/greet.ts\nsrc/lib/math.ts",
    });
  });

  it("lists everything not ignored, sorted, dirs with '/', .git/ skipped, dotfiles kept", async () => {
    expect((await find(fixtureFs(), { pattern: "*" })).text).toBe(
      [
        ".env.example",
        ".gitignore",
        "README.md",
        "assets/",
        "assets/logo.bin",
        "docs/",
        "docs/big.txt",
        "docs/notes/",
        "docs/notes/deep/",
        "docs/notes/deep/nested.md",
        "keep.log",
        "src/",
        "src/index.ts",
        "src/lib/",
        "src/lib/.gitignore",
        "src/lib/greet.ts",
        "src/lib/math.ts",
        "src/long-line.txt",
        "src/windows.txt",
      ].join("\n"),
    );
  });

  it("matches names holding a line break with ** as with * (picomatch's regex alone did not)", async () => {
    const fs = fixtureFs();
    await fs.writeFile("odd/a\nb.txt", new TextEncoder().encode("x"));
    const listed = async (pattern: string) => (await find(fs, { pattern })).text;
    expect(await listed("**")).toContain("\nodd/\nodd/a\nb.txt\n");
    // What is inside odd/, not odd/ itself (as rg and fd read a trailing /**).
    expect(await listed("odd/**")).toBe("odd/a\nb.txt");
    expect(await listed("*.txt")).toContain("odd/a\nb.txt");
  });

  it("matches a glob with many '*' in one segment in linear time (20 s on a 200-character name as a backtracking regex)", async () => {
    const fs = fixtureFs();
    const long = `odd/${"a".repeat(200)}`;
    await fs.writeFile(long, new TextEncoder().encode("x"));
    expect((await find(fs, { pattern: "*a*a*a*a*b" })).text).toBe("No files found matching pattern");
    expect((await find(fs, { pattern: "odd/*a*a*a*a*" })).text).toBe(long);
    expect((await find(fs, { pattern: "src/**/x*y*z*.ts" })).error).toBe(false);
    expect((await find(fs, { pattern: "odd/*a*a*b" })).text).toBe("No files found matching pattern");
    expect((await find(fs, { pattern: "odd/\\*\\*\\*\\**" })).error).toBe(false);
  });

  it("reads parentheses and '|' as themselves, as fd and rg do: no extglobs, whose regex backtracks exponentially", async () => {
    const fs = new MemoryWorkspaceFs();
    for (const name of ["vitest.bench.config.ts", "event-loop-turn.ts", "+(a|b).ts", "+a.ts", "a.ts", "(xZ)", "fooZ"])
      await fs.writeFile(`d/${name}`, new TextEncoder().encode("x"));
    const listed = async (pattern: string) => (await find(fs, { pattern, path: "d" })).text.replaceAll("d/", "");
    // As an extglob this held the isolate for minutes on the first two names; read plainly it names nothing here.
    expect(await listed("@([!Z])*([!Z]|@(*([!Z])))Z")).toBe("No files found matching pattern");
    expect(await listed("+(a|b).ts")).toBe("+(a|b).ts");
    expect(await listed("(*Z)")).toBe("(xZ)");
    expect(await listed("!(*Z)")).toBe(["+(a|b).ts", "+a.ts", "a.ts", "event-loop-turn.ts", "fooZ", "vitest.bench.config.ts"].join("\n"));
    expect(await listed("[(]*")).toBe("(xZ)");
    expect(await listed("*.{ts,md}")).toBe(["+(a|b).ts", "+a.ts", "a.ts", "event-loop-turn.ts", "vitest.bench.config.ts"].join("\n"));
  });

  it("matches a glob of many wildcards in linear time, as picomatch's own matcher does on ordinary paths", async () => {
    // 400 segments: as a backtracking regex this took minutes (each `**` multiplies the work by the depth).
    const fs = new MemoryWorkspaceFs();
    const deep = Array.from({ length: 400 }, () => "a").join("/");
    await fs.writeFile(`${deep}/x`, new TextEncoder().encode("x"));
    await fs.writeFile("a/a/a/b", new TextEncoder().encode("x"));
    expect((await find(fs, { pattern: "**/a/**/a/**/a/**/a/**/a/b" })).text).toBe("No files found matching pattern");
    expect((await find(fs, { pattern: "**/a/**/a/**/b" })).text).toBe("a/a/a/b");
    expect((await find(fs, { pattern: "**/*a*a*/**/*a*a*/b" })).text).toBe("No files found matching pattern");
    // Braces whose choices overlap: 31 s over a name of 45 `a` as a backtracking regex.
    await fs.writeFile(`n/${"a".repeat(45)}c`, new TextEncoder().encode("x"));
    expect((await find(fs, { pattern: `${"{a,aa}".repeat(30)}b` })).text).toBe("No files found matching pattern");
    expect((await find(fs, { pattern: `${"{a,aa}".repeat(30)}c` })).text).toBe(`n/${"a".repeat(45)}c`);

    const paths = [
      "src/index.ts",
      "src/lib/greet.ts",
      "src/lib/.gitignore",
      "docs/notes/deep/nested.md",
      "a.b.c",
      "README.md",
      "x/y/z/w.test.ts",
    ];
    for (const glob of ["**/*/*.ts", "**/*e*.*", "*/**/*", "{src,docs}/**/*.*", "!**/*.*s*", "*.*.*", "**/lib/**/*.ts", "x/**/*.test.*"]) {
      const reference = picomatch(glob, { dot: true, posix: true });
      const base = (p: string) => (glob.includes("/") ? p : p.slice(p.lastIndexOf("/") + 1));
      expect([glob, paths.filter(compileGlob(glob))]).toEqual([glob, paths.filter((p) => reference(base(p)))]);
    }
  });

  it("honours negated .gitignore rules", async () => {
    expect((await find(fixtureFs(), { pattern: "*.log" })).text).toBe("keep.log");
  });

  it("matches a pattern without capitals in either case and one with a capital exactly, as fd's smart case (hunt 118)", async () => {
    const fs = new MemoryWorkspaceFs({
      "README.md": "x",
      Makefile: "x",
      "src/App.tsx": "x",
      "src/app.test.ts": "x",
      "docs/Ünïcode.md": "x",
    });
    const found = async (pattern: string) => (await find(fs, { pattern })).text;
    expect(await Promise.all(["readme*", "makefile", "app.tsx", "src/app*", "ü*", "**/*app*.{tsx,ts}"].map(found))).toEqual([
      "README.md",
      "Makefile",
      "src/App.tsx",
      "src/App.tsx\nsrc/app.test.ts",
      "docs/Ünïcode.md",
      // Four choice points: matched on RE2, in either case too.
      "src/App.tsx\nsrc/app.test.ts",
    ]);
    expect(await Promise.all(["README*", "App*", "Readme*", "*.MD"].map(found))).toEqual([
      "README.md",
      "src/App.tsx",
      "No files found matching pattern",
      "No files found matching pattern",
    ]);
  });

  it("matches .gitignore rules case-sensitively, as git does on Linux", async () => {
    const fs = new MemoryWorkspaceFs({
      ".gitignore": "Build/\n*.LOG\nREADME.md\n",
      "build/gen.c": "x",
      "Build/gen.c": "x",
      "debug.log": "x",
      "readme.md": "x",
    });
    expect((await find(fs, { pattern: "*" })).text).toBe(".gitignore\nbuild/\nbuild/gen.c\ndebug.log\nreadme.md");
  });

  it("lists the files of a directory excluded by one .gitignore and re-included by a deeper one, as git does", async () => {
    const fs = new MemoryWorkspaceFs({
      ".gitignore": "build/\n*.tmp\n",
      "build/out.js": "x",
      "sub/.gitignore": "!build/\n",
      "sub/build/f.txt": "needle",
      "sub/build/x.tmp": "x",
      "sub/build/deeper/g.txt": "x",
    });
    expect((await find(fs, { pattern: "*" })).text).toBe(
      [".gitignore", "sub/", "sub/.gitignore", "sub/build/", "sub/build/deeper/", "sub/build/deeper/g.txt", "sub/build/f.txt"].join("\n"),
    );
  });

  it("reads brackets as fd, rg and git do: [!x] and [^x] are negated classes, [a] is a class and not the text", async () => {
    const fs = new MemoryWorkspaceFs({ "_private.py": "x", "main.py": "x", "a.txt": "x", "[a].txt": "x", "!.txt": "x" });
    expect((await find(fs, { pattern: "[!_]*.py" })).text).toBe("main.py");
    expect((await find(fs, { pattern: "[^_]*.py" })).text).toBe("main.py");
    expect((await find(fs, { pattern: "[a].txt" })).text).toBe("a.txt");
    expect((await find(fs, { pattern: "[!a].txt" })).text).toBe("!.txt");
    expect((await find(fs, { pattern: "\\[a\\].txt" })).text).toBe("[a].txt");
    // A bracket nothing closes is the character itself.
    const odd = new MemoryWorkspaceFs({ "a[!]b": "x", "a[^]b": "x", "x[y": "x" });
    expect((await find(odd, { pattern: "a[!]b" })).text).toBe("a[!]b");
    expect((await find(odd, { pattern: "x[y" })).text).toBe("x[y");
  });

  it("matches a glob with '/' against the path relative to the search directory or to the workspace root", async () => {
    expect((await find(fixtureFs(), { pattern: "lib/*.ts", path: "src" })).text).toBe("src/lib/greet.ts\nsrc/lib/math.ts");
    expect((await find(fixtureFs(), { pattern: "src/**/*.ts" })).text).toBe("src/index.ts\nsrc/lib/greet.ts\nsrc/lib/math.ts");
    expect((await find(fixtureFs(), { pattern: "src/**/*.ts", path: "src" })).text).toBe("src/index.ts\nsrc/lib/greet.ts\nsrc/lib/math.ts");
    expect((await find(fixtureFs(), { pattern: "src/lib/*", path: "src/lib" })).text).toBe(
      "src/lib/.gitignore\nsrc/lib/greet.ts\nsrc/lib/math.ts",
    );
    expect((await find(fixtureFs(), { pattern: "docs/*", path: "src" })).text).toBe("No files found matching pattern");
    // A negated pattern leaves out what it names either way (what is inside src/lib, not src/lib).
    expect((await find(fixtureFs(), { pattern: "!src/lib/**", path: "src" })).text).toBe(
      "src/index.ts\nsrc/lib/\nsrc/long-line.txt\nsrc/windows.txt",
    );
    expect((await find(fixtureFs(), { pattern: "!lib/**", path: "src" })).text).toBe(
      "src/index.ts\nsrc/lib/\nsrc/long-line.txt\nsrc/windows.txt",
    );
  });

  it("finds directories by name", async () => {
    expect((await find(fixtureFs(), { pattern: "deep" })).text).toBe("docs/notes/deep/");
  });

  it("searches an explicitly given ignored directory in full", async () => {
    expect((await find(fixtureFs(), { pattern: "*.js", path: "node_modules" })).text).toBe("node_modules/pkg/index.js");
  });

  it("stops at the result limit with a notice", async () => {
    expect((await find(fixtureFs(), { pattern: "*", limit: 3 })).text).toBe(
      ".env.example\n.gitignore\nREADME.md\n\n[Showing results 1-3 of 19 (limit=3). Use offset=4 to continue, limit=6 for more, or narrow path or pattern]",
    );
  });

  it("defaults to 1000 results", async () => {
    const files = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${String(i).padStart(4, "0")}.txt`, ""]));
    const out = await find(new MemoryWorkspaceFs(files), { pattern: "*.txt" });
    expect(
      out.text.endsWith(
        "f0999.txt\n\n[Showing results 1-1000 of 1001 (limit=1000). Use offset=1001 to continue, limit=2000 for more, or narrow path or pattern]",
      ),
    ).toBe(true);
  });

  it("stops at 50 KB of output", async () => {
    const files = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`${String(i).padStart(4, "0")}${"n".repeat(96)}`, ""]));
    const out = await find(new MemoryWorkspaceFs(files), { pattern: "*" });
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(506);
    expect(
      out.text.endsWith("\n\n[Showing results 1-506 of 600 (50.0KB limit). Use offset=507 to continue, or narrow path or pattern]"),
    ).toBe(true);
  });

  it("when the byte cap cut the list, says how much it showed and offers the offset, not a larger limit", async () => {
    // The hunt's case: 1,600 long paths, cut at a 32k-token window's 24 KB.
    const files = Object.fromEntries(
      Array.from({ length: 1600 }, (_, i) => [
        `packages/some-long-package-name/src/components/file-${String(i).padStart(4, "0")}.tsx`,
        "x\n",
      ]),
    );
    const fs = new MemoryWorkspaceFs(files);
    for (const limit of [1000, 2000]) {
      const out = await find(fs, { pattern: "*.tsx", limit }, 25_600);
      expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(402);
      expect(
        out.text.endsWith(
          "file-0401.tsx\n\n[Showing results 1-402 of 1600 (24.0KB limit). Use offset=403 to continue, or narrow path or pattern]",
        ),
      ).toBe(true);
    }
    const next = await find(fs, { pattern: "*.tsx", offset: 403 }, 25_600);
    expect(next.text.startsWith("packages/some-long-package-name/src/components/file-0402.tsx\n")).toBe(true);
    expect(
      next.text.endsWith("\n\n[Showing results 403-804 of 1600 (24.0KB limit). Use offset=805 to continue, or narrow path or pattern]"),
    ).toBe(true);
  });

  it("pages through every result with offset, no gap and no overlap, whether the limit or the byte cap ends a page", async () => {
    const fs = fixtureFs();
    await fs.writeFile("odd/a\nb.txt", new TextEncoder().encode("x"));
    for (let i = 0; i < 40; i++) await fs.writeFile(`pad/${String(i).padStart(2, "0")}-${"n".repeat(60)}`, new Uint8Array());
    const all = (await find(fs, { pattern: "*" })).text;
    expect(all.split("\n")).toHaveLength(63); // 62 results, one name holding a line break
    for (const [limit, maxOutputBytes] of [
      [4, undefined],
      [1000, 1064],
      [20, 1050],
    ] as const) {
      const pages: string[] = [];
      let offset: number | undefined = 1;
      while (offset !== undefined) {
        const { text } = await find(fs, { pattern: "*", limit, offset }, maxOutputBytes);
        pages.push(text.split("\n\n[")[0]!);
        const next = /Use offset=(\d+) to continue/.exec(text)?.[1];
        offset = next === undefined ? undefined : Number(next);
      }
      expect(pages.length).toBeGreaterThan(1);
      expect(pages.join("\n"), `limit ${limit}, budget ${maxOutputBytes}`).toBe(all);
    }
    await expect(find(fs, { pattern: "*", offset: 62 })).resolves.toEqual({ text: "src/windows.txt", error: false });
    await expect(find(fs, { pattern: "*", offset: 63 })).rejects.toMatchObject({
      code: "offset_out_of_range",
      message: "Offset 63 is beyond the last of the 62 results",
    });
  });

  it("says so when nothing matches", async () => {
    expect(await find(fixtureFs(), { pattern: "*.rs" })).toEqual({ text: "No files found matching pattern", error: false });
  });

  it("refuses a missing search path", async () => {
    await expect(find(fixtureFs(), { pattern: "*", path: "nope" })).rejects.toMatchObject({ code: "not_found" });
  });
});
