import { describe, expect, it, vi } from "vitest";
import { bashTool } from "../../src/tools/bash";
import { WorkspaceError } from "../../src/workspace/errors";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

const bash = (fs: MemoryWorkspaceFs, command: string, allowWrite = true) => bashTool.execute({ command }, toolContext(fs, { allowWrite }));

/** Every file with its mode in octal and its text. */
const tree = (fs: MemoryWorkspaceFs) => fs.files().map((f) => [f, fs.stat(f)?.mode.toString(8), fs.text(f)]);

const project = () =>
  new MemoryWorkspaceFs({
    "src/index.ts": "export const a = 1;\n",
    "src/utils/log.ts": "export const log = 1;\n",
    "tests/unit/a.test.ts": "test\n",
  });

describe("bash: a directory a command empties", () => {
  it("appends are written together, and one whose write fails is told in the result, not by the next command to touch the file", async () => {
    const fs = new MemoryWorkspaceFs({ "b.txt": "x\n", "c.txt": "y\n" });
    const write = fs.writeFile.bind(fs);
    const writes: string[] = [];
    vi.spyOn(fs, "writeFile").mockImplementation(async (path, ...rest) => {
      writes.push(path);
      if (path === "c.txt") throw new WorkspaceError("workspace_full", "the session's workspace changes are full");
      return write(path, ...rest);
    });
    const out = await bash(fs, "for i in 1 2 3; do echo $i >> b.txt; echo $i >> c.txt; done; cat b.txt; wc -l < c.txt");
    expect(out).toEqual({
      error: true,
      text:
        "x\n1\n2\n3\n1\n" +
        "bash: appending to /workspace/c.txt: EIO: the session's workspace changes are full, append '/workspace/c.txt'\n\n" +
        "[Command exited with code 1]",
      exitCode: 1,
      code: "exit_status",
    });
    // One write of each file, when cat and wc needed them.
    expect([writes, fs.text("b.txt"), fs.text("c.txt")]).toEqual([["b.txt", "c.txt"], "x\n1\n2\n3\n", "y\n"]);
  });

  it("a read writes the appends of the file it reads only (hunt 123: reading a small file rewrote a large one every pass)", async () => {
    const fs = new MemoryWorkspaceFs({ "big.txt": "x\n", "small.txt": "s\n" });
    const writes = vi.spyOn(fs, "writeFile");
    const out = await bash(fs, "for i in 1 2 3; do echo $i >> big.txt; read x < small.txt; echo $x >> small.txt; done; cat small.txt");
    expect(out).toEqual({ error: false, text: "s\ns\ns\ns", exitCode: 0 });
    // small.txt before each read after the first; big.txt once, when the command ended.
    expect(writes.mock.calls.map(([path]) => path)).toEqual(["small.txt", "small.txt", "small.txt", "big.txt"]);
    expect(fs.text("big.txt")).toBe("x\n1\n2\n3\n");
  });

  it("appends still waiting when a command times out are written, though reads then see the stopped signal (hunt 123: lost, and the result was tool_failed)", async () => {
    const fs = new MemoryWorkspaceFs({ "log.txt": "a\n" });
    // A snapshot's file not yet cached is read from storage, which stops at the command's signal.
    const read = fs.readFile.bind(fs);
    const storage = fs as unknown as { readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> };
    vi.spyOn(storage, "readFile").mockImplementation(async (path, signal) => {
      signal?.throwIfAborted();
      return read(path);
    });
    const out = await bashTool.execute(
      { command: "echo out; echo hi >> log.txt; sleep 5", timeoutMs: 300 },
      toolContext(fs, { allowWrite: true }),
    );
    expect(out).toEqual({
      error: true,
      text: "out\n\n[Command timed out after 300 ms. It had changed 1 workspace file (log.txt), which stay changed]",
      exitCode: expect.any(Number),
      code: "bash_timeout",
    });
    expect(fs.text("log.txt")).toBe("a\nhi\n");
  });

  it("a >> redirect that adds nothing does not rewrite the file (each one rewrote it whole: 40 on 16 MiB took 8-9 s, hunt 120)", async () => {
    const fs = new MemoryWorkspaceFs({ "b.txt": "x\n" });
    const writes = vi.spyOn(fs, "writeFile");
    expect(await bash(fs, "for i in 1 2 3; do : >> b.txt; done; echo y >> b.txt; cat b.txt")).toEqual({
      error: false,
      text: "x\ny",
      exitCode: 0,
    });
    expect(writes.mock.calls.map(([path]) => path)).toEqual(["b.txt"]);
  });

  it("stays for the rest of the command: a file moved back or copied in lands inside it", async () => {
    const fs = project();
    const out = await bash(
      fs,
      "mv src/utils/log.ts src/log.ts && mv src/log.ts src/utils/ && rm tests/unit/*.ts && cp src/index.ts tests/unit/ && ls src/utils tests/unit",
    );
    expect([out.exitCode, out.text]).toEqual([0, "src/utils:\nlog.ts\n\ntests/unit:\nindex.ts"]);
    expect(tree(fs)).toEqual([
      ["src/index.ts", "644", "export const a = 1;\n"],
      ["src/utils/log.ts", "644", "export const log = 1;\n"],
      ["tests/unit/index.ts", "644", "export const a = 1;\n"],
    ]);
  });

  it("can be removed with rmdir, its emptied parent too, and is still the current directory after cd", async () => {
    const fs = project();
    const removed = await bash(fs, "rm tests/unit/a.test.ts && rmdir tests/unit && ls tests && rmdir tests && echo removed");
    expect([removed.exitCode, removed.text]).toEqual([0, "removed"]);
    const cd = await bash(project(), "cd src/utils && rm *.ts && ls && pwd");
    expect([cd.exitCode, cd.text]).toEqual([0, "/workspace/src/utils"]);
  });

  it("lets a directory be renamed by moving its contents, and rmdir the old one", async () => {
    const fs = project();
    const out = await bash(fs, "mv src src.old && mkdir src && mv src.old/* src/ && rmdir src.old && echo moved && ls");
    expect([out.exitCode, out.text]).toEqual([0, "moved\nsrc\ntests"]);
    expect(fs.files()).toEqual(["src/index.ts", "src/utils/log.ts", "tests/unit/a.test.ts"]);
  });

  it("goes along when its parent is moved", async () => {
    const out = await bash(project(), "rm src/utils/log.ts && mv src lib && ls lib && test -d lib/utils && echo kept");
    expect([out.exitCode, out.text]).toEqual([0, "index.ts\nutils\nkept"]);
  });

  it("goes with rm -r, rmdir refuses one that holds files, and it does not outlast the command", async () => {
    const fs = project();
    const out = await bash(fs, "rm src/utils/log.ts; rmdir src; echo rmdir=$?; rm -r src/utils; ls src; rm -r src; ls -d src");
    expect([out.exitCode, out.text]).toEqual([
      2,
      "rmdir=1\nindex.ts\nrmdir: failed to remove 'src': Directory not empty\nls: cannot access 'src': No such file or directory\n\n[Command exited with code 2]",
    ]);
    const emptied = await bash(fs, "rm tests/unit/a.test.ts && ls tests/unit");
    expect([emptied.exitCode, emptied.text]).toEqual([0, "(no output)"]);
    const next = await bash(fs, "ls tests");
    expect([next.exitCode, next.text]).toEqual([2, "ls: tests: No such file or directory\n\n[Command exited with code 2]"]);
  });
});

describe("bash: modes", () => {
  it("keeps an executable executable through /tmp: mv, cp and cp -r out and back", async () => {
    const fs = new MemoryWorkspaceFs();
    fs.put("scripts/run.sh", "#!/bin/sh\n", 0o755);
    fs.put("scripts/lib/env.sh", "#!/bin/sh\n", 0o755);
    fs.put("x.sh", "#!/bin/sh\necho x\n", 0o755);
    const out = await bash(
      fs,
      "mv scripts/run.sh /tmp/ && mv /tmp/run.sh scripts/run.sh && cp x.sh /tmp/r && cp /tmp/r new.sh && " +
        "cp -r scripts /tmp/bk && rm -rf scripts && cp -r /tmp/bk scripts",
    );
    expect(out.exitCode).toBe(0);
    expect(tree(fs)).toEqual([
      ["new.sh", "755", "#!/bin/sh\necho x\n"],
      ["scripts/lib/env.sh", "755", "#!/bin/sh\n"],
      ["scripts/run.sh", "755", "#!/bin/sh\n"],
      ["x.sh", "755", "#!/bin/sh\necho x\n"],
    ]);
  });

  it("a cp from /tmp onto an existing file keeps its mode, a mv gives it the source's, as in bash", async () => {
    const fs = new MemoryWorkspaceFs();
    fs.put("run.sh", "#!/bin/sh\necho old\n", 0o755);
    fs.put("go.sh", "#!/bin/sh\necho old\n", 0o755);
    const out = await bash(fs, "sed s/old/new/ run.sh > /tmp/r && cp /tmp/r run.sh && sed s/old/new/ go.sh > /tmp/g && mv /tmp/g go.sh");
    expect(out.exitCode).toBe(0);
    expect(tree(fs)).toEqual([
      ["go.sh", "644", "#!/bin/sh\necho new\n"],
      ["run.sh", "755", "#!/bin/sh\necho new\n"],
    ]);
  });

  it("a cp -r from /tmp keeps the modes of the files it overwrites and gives new ones their source's", async () => {
    const fs = new MemoryWorkspaceFs();
    fs.put("d/run.sh", "#!/bin/sh\necho old\n", 0o755);
    const out = await bash(
      fs,
      "mkdir -p /tmp/d && echo new > /tmp/d/run.sh && echo x > /tmp/d/x.sh && chmod +x /tmp/d/x.sh && cp -r /tmp/d .",
    );
    expect(out.exitCode).toBe(0);
    expect(tree(fs)).toEqual([
      ["d/run.sh", "755", "new\n"],
      ["d/x.sh", "755", "x\n"],
    ]);
  });

  it("counts every chmod's rewrite against the command's writes but one right after a write", async () => {
    const fs = new MemoryWorkspaceFs();
    fs.put("big.bin", new Uint8Array(10 * 1024 * 1024).fill(0x61));
    const out = await bash(fs, "chmod 755 big.bin && chmod 644 big.bin && chmod 755 big.bin && chmod 644 big.bin");
    // 10 MiB each: the fourth would pass the 32 MiB a command may write.
    expect([out.exitCode, fs.mutations.length, fs.stat("big.bin")?.mode.toString(8)]).toEqual([1, 3, "755"]);
  });

  it("chmod sets a file's permission bits and keeps its bytes; a directory's or an unchanged mode writes nothing", async () => {
    const fs = new MemoryWorkspaceFs({ "a.sh": "#!/bin/sh\n", "b.txt": "b", "c.txt": "c", "dir/d.txt": "d" });
    const out = await bash(fs, "chmod +x a.sh && chmod 4600 b.txt && chmod 644 c.txt && chmod 700 dir && stat -c %a a.sh b.txt");
    expect([out.exitCode, out.text]).toEqual([0, "755\n600"]);
    expect(tree(fs)).toEqual([
      ["a.sh", "755", "#!/bin/sh\n"],
      ["b.txt", "600", "b"],
      ["c.txt", "644", "c"],
      ["dir/d.txt", "644", "d"],
    ]);
    expect(fs.mutations).toEqual([
      { op: "write", path: "a.sh" },
      { op: "write", path: "b.txt" },
    ]);
  });

  it("chmod changes nothing when the run does not allow writes", async () => {
    const fs = new MemoryWorkspaceFs({ "a.sh": "#!/bin/sh\n" });
    const out = await bash(fs, "chmod +x a.sh", false);
    // just-bash's chmod words every failure so; the tool says what it was.
    expect([out.exitCode, out.text]).toEqual([
      1,
      "chmod: cannot access 'a.sh': No such file or directory\n\n[Command exited with code 1. " +
        "This run does not allow writes: 1 write to the workspace was refused (read-only file system: chmod '/workspace/a.sh'); nothing was changed]",
    ]);
    expect([fs.stat("a.sh")?.mode.toString(8), fs.mutations]).toEqual(["644", []]);
  });

  it("counts a file copied from /tmp once against the command's writes, though its mode is set after", async () => {
    const fs = new MemoryWorkspaceFs();
    fs.put("big.sh", new Uint8Array(6 * 1024 * 1024).fill(0x61), 0o755);
    // Five 6 MiB copies are 30 MiB of the command's 32 MiB; counted twice they would pass it at the third.
    const out = await bash(fs, "cp big.sh /tmp/b && for i in 1 2 3 4 5; do cp /tmp/b c$i.sh; done");
    expect(out.exitCode).toBe(0);
    expect(fs.files().map((f) => [f, fs.stat(f)?.mode.toString(8), fs.stat(f)?.size])).toEqual([
      ["big.sh", "755", 6 * 1024 * 1024],
      ...[1, 2, 3, 4, 5].map((i) => [`c${i}.sh`, "755", 6 * 1024 * 1024]),
    ]);
  });
});

describe("bash: /dev/null", () => {
  it("refuses moves to and from it (across mounts a move is a copy and a removal)", async () => {
    const fs = new MemoryWorkspaceFs({ "notes.txt": "keep me\n" });
    const into = await bash(fs, "mv notes.txt /dev/null");
    const from = await bash(fs, "mv /dev/null empty.txt");
    expect([into.exitCode, from.exitCode, fs.files(), fs.mutations]).toEqual([1, 1, ["notes.txt"], []]);
    expect(into.text).toContain("EACCES: permission denied, mv '/workspace/notes.txt' -> '/dev/null'");
  });

  it("reads as empty and keeps nothing written to it", async () => {
    const fs = new MemoryWorkspaceFs({ "app.log": "old log\n", "src/a.ts": "TODO: x\n" });
    const out = await bash(
      fs,
      "grep -r TODO src > /dev/null; ls missing 2> /dev/null; echo more >> /dev/null; cp /dev/null app.log; " +
        "cat /dev/null > cleared.txt; cp src/a.ts /dev/null; wc -c < /dev/null; cat /dev/null | wc -c; ls /dev",
    );
    expect([out.exitCode, out.text]).toEqual([0, "0\n0\nnull\nstderr\nstdout"]);
    expect(tree(fs)).toEqual([
      ["app.log", "644", ""],
      ["cleared.txt", "644", ""],
      ["src/a.ts", "644", "TODO: x\n"],
    ]);
  });

  it("takes writes when the run does not allow them, and leaves process substitution working", async () => {
    const fs = new MemoryWorkspaceFs({ "a.txt": "b\na\n" });
    const out = await bash(fs, "sort a.txt > /dev/null && cat <(sort a.txt) && while read l; do echo [$l]; done < <(echo x)", false);
    expect([out.exitCode, out.text]).toEqual([0, "a\nb\n[x]"]);
    expect(fs.mutations).toEqual([]);
  });
});

describe("bash: bytes that are not UTF-8", () => {
  it("keeps them through cat, cp and a redirect of what cat read; through a group, subshell, loop, xargs or find -exec they become UTF-8 text, as README says (hunt 73)", async () => {
    const fs = new MemoryWorkspaceFs({ "b.bin": new Uint8Array([0x00, 0x89, 0xff, 0xfe, 0x80]) });
    const out = await bash(
      fs,
      "cat b.bin > plain.bin; cp b.bin copy.bin; { cat b.bin; } > group.bin; (cat b.bin) > subshell.bin; " +
        "for f in b.bin; do cat $f; done > loop.bin; echo b.bin | xargs cat > xargs.bin; find . -name b.bin -exec cat {} \\; > findexec.bin",
    );
    expect([out.exitCode, out.text]).toEqual([0, "(no output)"]);
    const hex = async (path: string) => Buffer.from(await fs.readFile(path)).toString("hex");
    expect(await Promise.all(["plain.bin", "copy.bin"].map(hex))).toEqual(["0089fffe80", "0089fffe80"]);
    // just-bash joins a compound command's output as text: each byte becomes the character's UTF-8 encoding.
    expect(await Promise.all(["group.bin", "subshell.bin", "loop.bin", "xargs.bin", "findexec.bin"].map(hex))).toEqual(
      Array(5).fill("00c289c3bfc3bec280"),
    );
  });
});

describe("bash: read and mapfile (just-bash patched, patches/just-bash+3.4.2.patch)", () => {
  const text = "café\n日本語 한국어\n😀\n";

  it("keep UTF-8 text whole from a file, a pipe, a here-string or a descriptor (just-bash stored each byte as a character)", async () => {
    const fs = new MemoryWorkspaceFs({ "uni.txt": text });
    const out = await bash(
      fs,
      'while IFS= read -r l; do echo "$l"; done < uni.txt > loop.txt; cat uni.txt | while read -r l; do echo "[${#l}] $l"; done; ' +
        'read -r first < uni.txt; echo "$first ${#first}"; read -r a b <<< "日本 語"; echo "$b|$a"; ' +
        'exec 3< uni.txt; read -r -u 3 x; echo "$x"; mapfile -t L < uni.txt; echo "${L[1]} ${#L[@]}"; readarray -t M < <(cat uni.txt); echo "${M[2]}"',
    );
    expect([out.exitCode, out.text]).toEqual([0, "[4] café\n[7] 日本語 한국어\n[1] 😀\ncafé 4\n語|日本\ncafé\n日本語 한국어 3\n😀"]);
    expect(fs.text("loop.txt")).toBe(text);
  });

  it("keep text that only looks like UTF-8 read as Latin-1 ('Ã©') as it is, from a file, a pipe or a descriptor (hunt 80)", async () => {
    const fs = new MemoryWorkspaceFs({ "lat.txt": "Ã©tat\nÂ±5\n" });
    const out = await bash(
      fs,
      'while IFS= read -r l; do echo "$l"; done < lat.txt > loop.txt; cat lat.txt | { read -r a; echo "$a"; } > pipe.txt; ' +
        'exec 3< lat.txt; read -r -u 3 x; echo "$x" > fd.txt; mapfile -t L < lat.txt; echo "${L[1]}" > map.txt',
    );
    expect([out.exitCode, out.text]).toEqual([0, "(no output)"]);
    expect(["loop.txt", "pipe.txt", "fd.txt", "map.txt"].map((f) => fs.text(f))).toEqual(["Ã©tat\nÂ±5\n", "Ã©tat\n", "Ã©tat\n", "Â±5\n"]);
  });

  it("leave bytes that are not UTF-8 as they were (each becomes its character's UTF-8 encoding when written, as README says)", async () => {
    const fs = new MemoryWorkspaceFs({ "b.bin": new Uint8Array([0x61, 0xff, 0xfe, 0x0a]) });
    const out = await bash(fs, 'read -r x < b.bin; printf %s "$x" > out.bin; echo ${#x}');
    expect([out.exitCode, out.text]).toEqual([0, "3"]);
    expect(Buffer.from(await fs.readFile("out.bin")).toString("hex")).toBe("61c3bfc3be");
  });
});

describe("bash: writes that real bash refuses (hunt 75)", () => {
  it("refuses a write into a directory that does not exist, as a disk does; cp -r makes the directories of the tree it copies", async () => {
    const fs = project();
    // A redirect's failure ends the call (just-bash lets it escape), as EROFS does.
    expect(await bash(fs, "echo x > nodir/f.txt; echo after")).toEqual({
      error: true,
      text: "bash: ENOENT: no such file or directory, write '/workspace/nodir/f.txt'\n\n[Command exited with code 1]",
      exitCode: 1,
      code: "exit_status",
    });
    const out = await bash(fs, "cp src/index.ts nodir/c.ts; echo rc=$?; touch nodir/t; echo rc=$?; echo x | tee nodir/u; echo rc=$?");
    expect(out.text.split("\n").filter((l) => l.startsWith("rc="))).toEqual(["rc=1", "rc=1", "rc=1"]);
    expect(tree(fs).map(([f]) => f)).toEqual(["src/index.ts", "src/utils/log.ts", "tests/unit/a.test.ts"]);
    const made = await bash(fs, "mkdir -p nodir && echo x > nodir/f.txt && cp -r src copy && echo ok");
    expect([made.exitCode, made.text]).toEqual([0, "ok"]);
    expect(tree(fs).map(([f]) => f)).toEqual([
      "copy/index.ts",
      "copy/utils/log.ts",
      "nodir/f.txt",
      "src/index.ts",
      "src/utils/log.ts",
      "tests/unit/a.test.ts",
    ]);
  });

  it("refuses to move a directory onto a directory that holds files, changing nothing; onto an empty one it moves", async () => {
    const fs = new MemoryWorkspaceFs({ "d/x.txt": "new\n", "q/d/x.txt": "old\n", "q/d/keep.txt": "keep\n", "e/.keep": "" });
    const out = await bash(fs, "mv d q; echo rc=$?");
    expect(out.text).toContain("rc=1");
    expect(out.text).toContain("not empty");
    expect(tree(fs)).toEqual([
      ["d/x.txt", "644", "new\n"],
      ["e/.keep", "644", ""],
      ["q/d/keep.txt", "644", "keep\n"],
      ["q/d/x.txt", "644", "old\n"],
    ]);
    const moved = await bash(fs, "mkdir e/d && mv d e && echo ok");
    expect([moved.exitCode, moved.text]).toEqual([0, "ok"]);
    expect(tree(fs).map(([f]) => f)).toEqual(["e/.keep", "e/d/x.txt", "q/d/keep.txt", "q/d/x.txt"]);
  });

  it("replaces {} inside a word of find -exec ... \\; as GNU find does (just-bash moved every match onto one file named {}.bak)", async () => {
    const fs = new MemoryWorkspaceFs({ "d/x.txt": "x\n", "d/it's here.txt": "q\n", "d/sub/z.txt": "z\n" });
    const moved = await bash(fs, "find d -name '*.txt' -exec mv {} {}.bak \\; && find d -name '*.bak' -exec echo pre-{}-post \\; | sort");
    expect([moved.exitCode, moved.text]).toEqual([0, "pre-d/it's here.txt.bak-post\npre-d/sub/z.txt.bak-post\npre-d/x.txt.bak-post"]);
    expect(tree(fs)).toEqual([
      ["d/it's here.txt.bak", "644", "q\n"],
      ["d/sub/z.txt.bak", "644", "z\n"],
      ["d/x.txt.bak", "644", "x\n"],
    ]);
    // A whole {} and the + form are just-bash's own, as before.
    const whole = await bash(fs, "find d -name x.txt.bak -exec cat {} \\; && find d -type f -exec cat {} + | sort");
    expect([whole.exitCode, whole.text]).toEqual([0, "x\nq\nx\nz"]);
  });

  it("takes a trailing / as naming a directory: no file is written, renamed or made under that name (just-bash dropped the slash)", async () => {
    const files = { "a.txt": "A\n", "b.txt": "B\n", "d/x.txt": "X\n", "d2/y.txt": "Y\n" };
    const fs = new MemoryWorkspaceFs(files);
    // A redirect's failure ends the call (just-bash lets it escape), as EROFS does.
    expect(await bash(fs, "echo x > a.txt/; echo after")).toEqual({
      error: true,
      text: "bash: EISDIR: illegal operation on a directory, open '/workspace/a.txt/'\n\n[Command exited with code 1]",
      exitCode: 1,
      code: "exit_status",
    });
    const refused = await bash(
      fs,
      "mv a.txt nodir/; echo mv=$?; cp b.txt newdir/; echo cp=$?; echo y | tee out/ >/dev/null; echo tee=$?; " +
        "mv a.txt b.txt/; echo onto=$?; [ -e a.txt/ ] || echo 'a.txt/ is not there'; rm a.txt/; echo rm=$?",
    );
    expect(refused.text.split("\n").filter((l) => /^\w+=|is not there/.test(l))).toEqual([
      "mv=1",
      "cp=1",
      "tee=1",
      "onto=1",
      "a.txt/ is not there",
      "rm=1",
    ]);
    expect(refused.text).toContain("mv: cannot move 'a.txt': ENOTDIR: not a directory, mv '/workspace/a.txt' -> '/workspace/nodir/'");
    expect(fs.files()).toEqual(["a.txt", "b.txt", "d/x.txt", "d2/y.txt"]);
    // Onto a directory, or a directory to a new name, as before.
    const moved = await bash(fs, "cp b.txt d/ && mv a.txt d/ && mv d2 e/ && cp -r d/ f/ && mkdir g/ && ls -d g/ && ls d/");
    expect([moved.exitCode, moved.text]).toEqual([0, "g/\na.txt\nb.txt\nx.txt"]);
    expect(fs.files()).toEqual(["b.txt", "d/a.txt", "d/b.txt", "d/x.txt", "e/y.txt", "f/a.txt", "f/b.txt", "f/x.txt"]);
  });

  it("refuses ln before it changes anything (just-bash's ln -f deleted the destination, then failed)", async () => {
    const fs = new MemoryWorkspaceFs({ "a.txt": "a\n", "config.txt": "keep\n" });
    const out = await bash(fs, "ln -sf a.txt config.txt");
    expect(out).toEqual({
      error: true,
      text: "ln: links are not supported in the workspace; copy the file with cp instead\n\n[Command exited with code 1]",
      exitCode: 1,
      code: "exit_status",
    });
    expect(tree(fs)).toEqual([
      ["a.txt", "644", "a\n"],
      ["config.txt", "644", "keep\n"],
    ]);
  });
});
