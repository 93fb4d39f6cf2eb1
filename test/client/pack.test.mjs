// The terminal client's packer: the files git would track, never .git/, node_modules/ or .env*
// unless asked. Run by `npm run test:client` (node:test, no server needed).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { unpackTar } from "modern-tar";
import { listWorkspaceFiles, packWorkspace } from "../../client/pack.mjs";

const dirs = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A project with nested .gitignore files, negations, secrets, dependencies and a symlink. */
function fixture() {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-pack-"));
  dirs.push(root);
  const files = {
    ".gitignore": "*.log\nbuild/\n/secret.txt\n!keep.log\ndocs/*.tmp\nDist/\n*.TMP\n",
    "README.md": "# demo\n",
    "app.log": "noise\n",
    "keep.log": "kept by a negation\n",
    "secret.txt": "root-only rule\n",
    "src/secret.txt": "not at the root, so kept\n",
    "src/index.ts": "export {};\n",
    "src/.gitignore": "generated/\n!important.log\n*.snap\n",
    "src/important.log": "re-included below the root\n",
    "src/generated/x.ts": "ignored by src/.gitignore\n",
    "src/a.snap": "ignored by src/.gitignore\n",
    "build/out.js": "ignored\n",
    "docs/guide.md": "guide\n",
    "dist/out.js": "kept: Dist/ differs in case, and git matches case\n",
    "notes.tmp": "kept: *.TMP differs in case\n",
    "docs/draft.tmp": "ignored\n",
    "docs/deeper/note.tmp": "kept: docs/*.tmp is anchored to docs/\n",
    ".env": "SECRET=1\n",
    ".env.local": "SECRET=2\n",
    "config/.env.production": "SECRET=3\n",
    "node_modules/dep/index.js": "dependency\n",
    "packages/a/node_modules/dep/index.js": "nested dependency\n",
    "bin/run.sh": "#!/bin/sh\necho hi\n",
  };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
  execFileSync("chmod", ["+x", path.join(root, "bin/run.sh")]);
  symlinkSync("README.md", path.join(root, "link.md"));
  return root;
}

/** The paths git would add (`git add -A` in a fresh repository), symlinks aside. */
function gitTracked(root) {
  const git = (...args) => execFileSync("git", ["-C", root, ...args], { encoding: "utf8" });
  git("init", "-q");
  git("add", "-A");
  return git("ls-files", "-s")
    .trim()
    .split("\n")
    .filter((line) => !line.startsWith("120000")) // symlinks
    .map((line) => line.split("\t")[1])
    .sort();
}

describe("listWorkspaceFiles", () => {
  it("picks the files git tracks, minus .env* and node_modules/", async () => {
    const root = fixture();
    const { files, skipped } = await listWorkspaceFiles(root);
    const expected = gitTracked(root).filter((p) => !/(^|\/)\.env[^/]*$/.test(p) && !/(^|\/)node_modules\//.test(p));
    assert.deepEqual(
      files.map((f) => f.path),
      expected,
    );
    assert.deepEqual(skipped, [{ path: "link.md", reason: "symbolic link" }]);
    // Spot checks of git's rules, so a change in git's behaviour would show here too.
    const paths = new Set(files.map((f) => f.path));
    for (const p of ["keep.log", "src/secret.txt", "src/important.log", "docs/deeper/note.tmp", "bin/run.sh"]) assert.ok(paths.has(p), p);
    for (const p of ["app.log", "secret.txt", "src/a.snap", "src/generated/x.ts", "build/out.js", "docs/draft.tmp"])
      assert.ok(!paths.has(p), p);
    assert.ok(![...paths].some((p) => p.startsWith(".git/")));
  });

  it("packs .env* and node_modules/ only when asked", async () => {
    const root = fixture();
    const withEnv = new Set((await listWorkspaceFiles(root, { includeEnv: true })).files.map((f) => f.path));
    for (const p of [".env", ".env.local", "config/.env.production"]) assert.ok(withEnv.has(p), p);
    assert.ok(!withEnv.has("node_modules/dep/index.js"));
    const withDeps = new Set((await listWorkspaceFiles(root, { includeNodeModules: true })).files.map((f) => f.path));
    for (const p of ["node_modules/dep/index.js", "packages/a/node_modules/dep/index.js"]) assert.ok(withDeps.has(p), p);
    assert.ok(!withDeps.has(".env"));
  });

  it("never packs .git/, even when it is not ignored anywhere", async () => {
    const root = fixture();
    gitTracked(root); // creates .git/
    const { files } = await listWorkspaceFiles(root, { includeEnv: true, includeNodeModules: true });
    assert.ok(!files.some((f) => f.path === ".git" || f.path.startsWith(".git/")));
  });
});

/** A directory holding `files` (path -> text). */
function tree(files) {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-pack-"));
  dirs.push(root);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
  return root;
}

describe("listWorkspaceFiles: git's rules in and out of a repository", () => {
  it("in a repository asks git, so a sub-directory keeps its parents' .gitignore and info/exclude (hunt 12)", async () => {
    const repo = tree({
      ".gitignore": "*.pem\nsecrets/\n",
      "packages/app/index.js": "x\n",
      "packages/app/server.pem": "key\n",
      "packages/app/secrets/db.txt": "pw\n",
      "packages/app/local-only.txt": "mine\n",
    });
    execFileSync("git", ["-C", repo, "init", "-q"]);
    writeFileSync(path.join(repo, ".git", "info", "exclude"), "local-only.txt\n");
    const { files } = await listWorkspaceFiles(path.join(repo, "packages", "app"));
    assert.deepEqual(
      files.map((f) => f.path),
      ["index.js"],
    );
    // The walker alone (no git) reads no rule above the directory.
    const walked = await listWorkspaceFiles(path.join(repo, "packages", "app"), { useGit: false });
    assert.deepEqual(
      walked.files.map((f) => f.path),
      ["index.js", "local-only.txt", "secrets/db.txt", "server.pem"],
    );
  });

  it("in a repository, a directory git ignores as a whole is refused, not walked with its own rules; --include-ignored packs it (hunt 77)", async () => {
    const repo = tree({
      ".gitignore": "secrets/*\ndist/\n",
      "app.js": "x\n",
      "secrets/creds.txt": "AWS_SECRET_ACCESS_KEY=1\n",
      "dist/main.js": "built\n",
      "dist/.env": "SECRET=1\n",
      "empty/.keep-none/.gitkeep": "",
    });
    execFileSync("git", ["-C", repo, "init", "-q"]);
    await assert.rejects(
      listWorkspaceFiles(path.join(repo, "secrets")),
      new Error(
        `git ignores every file in ${path.join(repo, "secrets")} (1 of them, such as creds.txt): nothing was sent. ` +
          "Give --include-ignored to pack them anyway (.git, node_modules/ and .env* stay out unless asked for)",
      ),
    );
    const built = await listWorkspaceFiles(path.join(repo, "dist"), { includeIgnored: true });
    assert.deepEqual(
      built.files.map((f) => f.path),
      ["main.js"],
    );
    // From the repository's root --include-ignored packs what .gitignore leaves out too.
    const all = await listWorkspaceFiles(repo, { includeIgnored: true });
    assert.deepEqual(
      all.files.map((f) => f.path),
      [".gitignore", "app.js", "dist/main.js", "empty/.keep-none/.gitkeep", "secrets/creds.txt"],
    );
  });

  it("a name that is not UTF-8 is left out and listed, in a repository and outside one (the walk failed on it, git dropped it)", async () => {
    const root = tree({ "a.txt": "a\n" });
    writeFileSync(Buffer.concat([Buffer.from(path.join(root, "caf")), Buffer.from([0xe9]), Buffer.from(".txt")]), "latin-1 name\n");
    const expected = {
      files: ["a.txt"],
      skipped: [{ path: "caf\uFFFD.txt", reason: "a name that is not UTF-8 (a workspace's names are UTF-8)" }],
    };
    const outside = await listWorkspaceFiles(root);
    assert.deepEqual({ files: outside.files.map((f) => f.path), skipped: outside.skipped }, expected);
    execFileSync("git", ["-C", root, "init", "-q"]);
    const inside = await listWorkspaceFiles(root);
    assert.deepEqual({ files: inside.files.map((f) => f.path), skipped: inside.skipped }, expected);
  });

  it("git's list and the walk agree on the fixture", async () => {
    const root = fixture();
    const walked = (await listWorkspaceFiles(root)).files.map((f) => f.path);
    gitTracked(root);
    assert.deepEqual(
      (await listWorkspaceFiles(root)).files.map((f) => f.path),
      walked,
    );
  });

  it("without git: a BOM does not hide the first rule, a linked .gitignore is not followed, a .git file is not packed, the defaults keep their case", async () => {
    const outside = tree({ rules: "a.txt\n" });
    const root = tree({
      ".gitignore": "\uFEFFsecret.txt\n",
      "secret.txt": "s\n",
      "a.txt": "a\n",
      "sub/a.txt": "a\n",
      ".git": "gitdir: /elsewhere/.git/worktrees/x\n",
      "Node_Modules/x.js": "kept: not node_modules\n",
      ".ENV.example": "kept: not .env*\n",
    });
    symlinkSync(path.join(outside, "rules"), path.join(root, "sub", ".gitignore"));
    const { files, skipped } = await listWorkspaceFiles(root);
    assert.deepEqual(
      files.map((f) => f.path),
      [".ENV.example", ".gitignore", "Node_Modules/x.js", "a.txt", "sub/a.txt"],
    );
    assert.deepEqual(skipped, [{ path: "sub/.gitignore", reason: "symbolic link" }]);
  });

  it("without git: a directory excluded by one .gitignore and re-included by a deeper one keeps its files, as git lists them", async () => {
    const root = tree({
      ".gitignore": "build/\n*.tmp\n",
      "build/out.js": "ignored\n",
      "sub/.gitignore": "!build/\n",
      "sub/build/f.txt": "kept\n",
      "sub/build/x.tmp": "ignored by *.tmp\n",
      "sub/build/deeper/g.txt": "kept\n",
    });
    const walked = (await listWorkspaceFiles(root)).files.map((f) => f.path);
    assert.deepEqual(walked, [".gitignore", "sub/.gitignore", "sub/build/deeper/g.txt", "sub/build/f.txt"]);
    assert.deepEqual(gitTracked(root), walked);
  });

  it("without git: a repository inside the directory (a .git directory or file) is left out and listed, as git lists it (hunt 28)", async () => {
    const root = tree({
      "main.js": "1\n",
      "vendor/lib/inner.js": "a repository of its own\n",
      "vendor/sub/inner.js": "a submodule's checkout\n",
      "vendor/plain/kept.js": "kept\n",
    });
    execFileSync("git", ["-C", path.join(root, "vendor", "lib"), "init", "-q"]);
    // A submodule's checkout has a .git file naming its repository, which lives elsewhere.
    const elsewhere = tree({});
    execFileSync("git", ["-C", elsewhere, "init", "-q"]);
    writeFileSync(path.join(root, "vendor", "sub", ".git"), `gitdir: ${path.join(elsewhere, ".git")}\n`);
    const walked = await listWorkspaceFiles(root);
    assert.deepEqual(
      walked.files.map((f) => f.path),
      ["main.js", "vendor/plain/kept.js"],
    );
    const reason = "a git submodule or a repository inside this one";
    assert.deepEqual(walked.skipped, [
      { path: "vendor/lib", reason },
      { path: "vendor/sub", reason },
    ]);
    // The same directory as a work tree: git's own list gives the same answer.
    execFileSync("git", ["-C", root, "init", "-q"]);
    assert.deepEqual(await listWorkspaceFiles(root), walked);
  });

  it("skips names the archive would put at another path (a backslash, a drive letter) instead of renaming them", async () => {
    const root = tree({ "real\\f.txt": "fake\n", "real/f.txt": "real\n", "C:notes.txt": "fake\n", "notes.txt": "real\n" });
    const packed = await packWorkspace(root, { useGit: false });
    assert.deepEqual(
      packed.files.map((f) => f.path),
      ["notes.txt", "real/f.txt"],
    );
    assert.deepEqual(
      packed.skipped.map((s) => s.path),
      ["C:notes.txt", "real\\f.txt"],
    );
    const entries = await unpackTar(gunzipSync(packed.archive));
    assert.deepEqual(
      entries.map((e) => [e.header.name, new TextDecoder().decode(e.data)]),
      [
        ["notes.txt", "real\n"],
        ["real/f.txt", "real\n"],
      ],
    );
  });
});

describe("packWorkspace", () => {
  it("is a tar.gz of exactly those files, with their bytes and executable bits", async () => {
    const root = fixture();
    const packed = await packWorkspace(root);
    const entries = await unpackTar(gunzipSync(packed.archive));
    assert.deepEqual(
      entries.map((e) => e.header.name),
      packed.files.map((f) => f.path),
    );
    const run = entries.find((e) => e.header.name === "bin/run.sh");
    assert.equal(new TextDecoder().decode(run?.data), "#!/bin/sh\necho hi\n");
    assert.equal((run?.header.mode ?? 0) & 0o111, 0o111);
    assert.equal(
      packed.bytes,
      packed.files.reduce((n, f) => n + f.size, 0),
    );
  });
});
