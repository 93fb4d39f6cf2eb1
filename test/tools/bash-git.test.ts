import { describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

/**
 * The shell's git against git 2.39: each scenario's files are the snapshot (a repository's one
 * commit), its setup command the session's changes (the working tree). Each row: what, the
 * scenario, the command, and the stdout and exit code git 2.39.5 gave in a repository made the same
 * way (scripts/record-git-cases.cjs, LC_ALL=C.UTF-8).
 */
const scenarios: Record<string, { files: Record<string, string | Uint8Array>; setup: string }> = {
  edited: {
    files: {
      ".gitignore": "*.log\n",
      "src/a.ts": "a\nb\nc\n",
      "b.txt": "x\n",
      "docs/d.md": "doc\n",
      "src/lib/l.ts": "l\n",
      "kept.log": "tracked though ignored\n",
    },
    setup:
      "printf 'a\\nB\\nc\\nd\\n' > src/a.ts && rm b.txt && echo new > 'n e.txt' && mkdir -p newdir/sub && echo 1 > newdir/sub/f && echo 2 > newdir/g && echo x > x.log && echo q > src/lib/q.ts && chmod +x docs/d.md && echo é > é.txt && echo more >> kept.log",
  },
  clean: {
    files: {
      "a.txt": "one\n",
      "dir/b.txt": "two\n",
    },
    setup: "true",
  },
  untracked: {
    files: {
      "a.txt": "one\n",
    },
    setup: "echo new > b.txt && mkdir -p d/e && echo x > d/e/f.txt",
  },
  rewritten: {
    files: {
      "a.txt": "1\n2\n3\n",
      "dir/b.txt": "same\n",
    },
    setup: "printf '1\\n2\\n3\\n' > a.txt && cp dir/b.txt /tmp/b && cp /tmp/b dir/b.txt",
  },
  binary: {
    files: {
      "img.bin": new Uint8Array([137, 80, 0, 1, 2]),
      "t.txt": "t\n",
    },
    setup: "echo iVAAAQIDBA== | base64 -d > img.bin && echo u >> t.txt",
  },
  large: {
    files: {
      "a/very/long/directory/name/that/goes/on/and/on/and/on/file-with-a-long-name.ts":
        "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nline 15\nline 16\nline 17\nline 18\nline 19\nline 20\nline 21\nline 22\nline 23\nline 24\nline 25\nline 26\nline 27\nline 28\nline 29\nline 30\nline 31\nline 32\nline 33\nline 34\nline 35\nline 36\nline 37\nline 38\nline 39\nline 40\nline 41\nline 42\nline 43\nline 44\nline 45\nline 46\nline 47\nline 48\nline 49\nline 50\nline 51\nline 52\nline 53\nline 54\nline 55\nline 56\nline 57\nline 58\nline 59\nline 60\nline 61\nline 62\nline 63\nline 64\nline 65\nline 66\nline 67\nline 68\nline 69\nline 70\nline 71\nline 72\nline 73\nline 74\nline 75\nline 76\nline 77\nline 78\nline 79\nline 80\nline 81\nline 82\nline 83\nline 84\nline 85\nline 86\nline 87\nline 88\nline 89\nline 90\nline 91\nline 92\nline 93\nline 94\nline 95\nline 96\nline 97\nline 98\nline 99\nline 100\nline 101\nline 102\nline 103\nline 104\nline 105\nline 106\nline 107\nline 108\nline 109\nline 110\nline 111\nline 112\nline 113\nline 114\nline 115\nline 116\nline 117\nline 118\nline 119\nline 120\nline 121\nline 122\nline 123\nline 124\nline 125\nline 126\nline 127\nline 128\nline 129\nline 130\nline 131\nline 132\nline 133\nline 134\nline 135\nline 136\nline 137\nline 138\nline 139\nline 140\nline 141\nline 142\nline 143\nline 144\nline 145\nline 146\nline 147\nline 148\nline 149\nline 150\nline 151\nline 152\nline 153\nline 154\nline 155\nline 156\nline 157\nline 158\nline 159\nline 160\nline 161\nline 162\nline 163\nline 164\nline 165\nline 166\nline 167\nline 168\nline 169\nline 170\nline 171\nline 172\nline 173\nline 174\nline 175\nline 176\nline 177\nline 178\nline 179\nline 180\nline 181\nline 182\nline 183\nline 184\nline 185\nline 186\nline 187\nline 188\nline 189\nline 190\nline 191\nline 192\nline 193\nline 194\nline 195\nline 196\nline 197\nline 198\nline 199\nline 200\nline 201\nline 202\nline 203\nline 204\nline 205\nline 206\nline 207\nline 208\nline 209\nline 210\nline 211\nline 212\nline 213\nline 214\nline 215\nline 216\nline 217\nline 218\nline 219\nline 220\nline 221\nline 222\nline 223\nline 224\nline 225\nline 226\nline 227\nline 228\nline 229\nline 230\nline 231\nline 232\nline 233\nline 234\nline 235\nline 236\nline 237\nline 238\nline 239\nline 240\nline 241\nline 242\nline 243\nline 244\nline 245\nline 246\nline 247\nline 248\nline 249\nline 250\nline 251\nline 252\nline 253\nline 254\nline 255\nline 256\nline 257\nline 258\nline 259\nline 260\nline 261\nline 262\nline 263\nline 264\nline 265\nline 266\nline 267\nline 268\nline 269\nline 270\nline 271\nline 272\nline 273\nline 274\nline 275\nline 276\nline 277\nline 278\nline 279\nline 280\nline 281\nline 282\nline 283\nline 284\nline 285\nline 286\nline 287\nline 288\nline 289\nline 290\nline 291\nline 292\nline 293\nline 294\nline 295\nline 296\nline 297\nline 298\nline 299\n",
      "short.txt": "s\n",
      "mid.txt":
        "m 0\nm 1\nm 2\nm 3\nm 4\nm 5\nm 6\nm 7\nm 8\nm 9\nm 10\nm 11\nm 12\nm 13\nm 14\nm 15\nm 16\nm 17\nm 18\nm 19\nm 20\nm 21\nm 22\nm 23\nm 24\nm 25\nm 26\nm 27\nm 28\nm 29\nm 30\nm 31\nm 32\nm 33\nm 34\nm 35\nm 36\nm 37\nm 38\nm 39\n",
    },
    setup:
      "sed -i 's/line 1/LINE 1/' a/very/long/directory/name/that/goes/on/and/on/and/on/file-with-a-long-name.ts && sed -i '1,20d' mid.txt && echo t >> short.txt",
  },
  ignored: {
    files: {
      ".gitignore": "*.log\nbuild/\n",
      "t.txt": "t\n",
      "a b.txt": "x\n",
    },
    setup: "mkdir -p build u/v; echo b > build/o; echo 1 > u/v/w.log; echo 2 > u/z.txt; echo y >> 'a b.txt'",
  },
  edges: {
    files: {
      "empty.txt": "",
      "nonl.txt": "a\nb",
      "far.txt": "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n21\n22\n23\n24\n25\n26\n27\n28\n29\n",
      "docs/x.md": "x\n",
      "docs/y.md": "y\n",
    },
    setup:
      "rm empty.txt && printf 'a\\nc' > nonl.txt && sed -i 's/^2$/two/;s/^25$/twenty-five/' far.txt && : > new-empty.txt && rm -r docs",
  },
};

const GIT: [string, string, string, string, number][] = [
  [
    "long status",
    "edited",
    "git status",
    'On branch main\nChanges not staged for commit:\n  (use "git add/rm <file>..." to update what will be committed)\n  (use "git restore <file>..." to discard changes in working directory)\n\tdeleted:    b.txt\n\tmodified:   docs/d.md\n\tmodified:   kept.log\n\tmodified:   src/a.ts\n\nUntracked files:\n  (use "git add <file>..." to include in what will be committed)\n\tn e.txt\n\tnewdir/\n\tsrc/lib/q.ts\n\t"\\303\\251.txt"\n\nno changes added to commit (use "git add" and/or "git commit -a")\n',
    0,
  ],
  [
    "short status",
    "edited",
    "git status -s",
    ' D b.txt\n M docs/d.md\n M kept.log\n M src/a.ts\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n',
    0,
  ],
  [
    "porcelain",
    "edited",
    "git status --porcelain",
    ' D b.txt\n M docs/d.md\n M kept.log\n M src/a.ts\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n',
    0,
  ],
  [
    "short with branch",
    "edited",
    "git status -sb",
    '## main\n D b.txt\n M docs/d.md\n M kept.log\n M src/a.ts\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n',
    0,
  ],
  [
    "every untracked file",
    "edited",
    "git status -uall --short",
    ' D b.txt\n M docs/d.md\n M kept.log\n M src/a.ts\n?? "n e.txt"\n?? newdir/g\n?? newdir/sub/f\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n',
    0,
  ],
  [
    "untracked files left out",
    "edited",
    "git status -uno",
    'On branch main\nChanges not staged for commit:\n  (use "git add/rm <file>..." to update what will be committed)\n  (use "git restore <file>..." to discard changes in working directory)\n\tdeleted:    b.txt\n\tmodified:   docs/d.md\n\tmodified:   kept.log\n\tmodified:   src/a.ts\n\nno changes added to commit (use "git add" and/or "git commit -a")\n',
    0,
  ],
  [
    "ignored files",
    "edited",
    "git status --ignored -s",
    ' D b.txt\n M docs/d.md\n M kept.log\n M src/a.ts\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n!! x.log\n',
    0,
  ],
  [
    "short status from a subdirectory",
    "edited",
    "cd src && git status -s",
    ' D ../b.txt\n M ../docs/d.md\n M ../kept.log\n M a.ts\n?? "../n e.txt"\n?? ../newdir/\n?? lib/q.ts\n?? "../\\303\\251.txt"\n',
    0,
  ],
  [
    "porcelain from a subdirectory",
    "edited",
    "cd src && git status --porcelain",
    ' D b.txt\n M docs/d.md\n M kept.log\n M src/a.ts\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n',
    0,
  ],
  [
    "long status from a subdirectory",
    "edited",
    "cd src/lib && git status",
    'On branch main\nChanges not staged for commit:\n  (use "git add/rm <file>..." to update what will be committed)\n  (use "git restore <file>..." to discard changes in working directory)\n\tdeleted:    ../../b.txt\n\tmodified:   ../../docs/d.md\n\tmodified:   ../../kept.log\n\tmodified:   ../a.ts\n\nUntracked files:\n  (use "git add <file>..." to include in what will be committed)\n\t../../n e.txt\n\t../../newdir/\n\tq.ts\n\t"../../\\303\\251.txt"\n\nno changes added to commit (use "git add" and/or "git commit -a")\n',
    0,
  ],
  ["status of a path", "edited", "git status -s src", " M src/a.ts\n?? src/lib/q.ts\n", 0],
  [
    "diff",
    "edited",
    "git diff",
    "diff --git a/b.txt b/b.txt\ndeleted file mode 100644\nindex 587be6b..0000000\n--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/docs/d.md b/docs/d.md\nold mode 100644\nnew mode 100755\ndiff --git a/kept.log b/kept.log\nindex ff2a780..b276be5 100644\n--- a/kept.log\n+++ b/kept.log\n@@ -1 +1,2 @@\n tracked though ignored\n+more\ndiff --git a/src/a.ts b/src/a.ts\nindex de98044..a7bc997 100644\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n",
    0,
  ],
  [
    "diff HEAD",
    "edited",
    "git diff HEAD",
    "diff --git a/b.txt b/b.txt\ndeleted file mode 100644\nindex 587be6b..0000000\n--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/docs/d.md b/docs/d.md\nold mode 100644\nnew mode 100755\ndiff --git a/kept.log b/kept.log\nindex ff2a780..b276be5 100644\n--- a/kept.log\n+++ b/kept.log\n@@ -1 +1,2 @@\n tracked though ignored\n+more\ndiff --git a/src/a.ts b/src/a.ts\nindex de98044..a7bc997 100644\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n",
    0,
  ],
  [
    "diff --stat",
    "edited",
    "git diff --stat",
    " b.txt     | 1 -\n docs/d.md | 0\n kept.log  | 1 +\n src/a.ts  | 3 ++-\n 4 files changed, 3 insertions(+), 2 deletions(-)\n",
    0,
  ],
  ["diff --numstat", "edited", "git diff --numstat", "0\t1\tb.txt\n0\t0\tdocs/d.md\n1\t0\tkept.log\n2\t1\tsrc/a.ts\n", 0],
  ["diff --name-only", "edited", "git diff --name-only", "b.txt\ndocs/d.md\nkept.log\nsrc/a.ts\n", 0],
  ["diff --name-status", "edited", "git diff --name-status", "D\tb.txt\nM\tdocs/d.md\nM\tkept.log\nM\tsrc/a.ts\n", 0],
  ["diff --shortstat", "edited", "git diff --shortstat", " 4 files changed, 3 insertions(+), 2 deletions(-)\n", 0],
  [
    "diff --stat -p",
    "edited",
    "git diff --stat -p -- src",
    " src/a.ts | 3 ++-\n 1 file changed, 2 insertions(+), 1 deletion(-)\n\ndiff --git a/src/a.ts b/src/a.ts\nindex de98044..a7bc997 100644\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n",
    0,
  ],
  ["nothing staged", "edited", "git diff --cached; git diff --staged --stat", "", 0],
  ["diff --quiet", "edited", "git diff --quiet; echo $?; git diff --quiet -- newdir; echo $?", "1\n0\n", 0],
  ["diff --exit-code", "edited", "git diff --exit-code --name-only; echo $?", "b.txt\ndocs/d.md\nkept.log\nsrc/a.ts\n1\n", 0],
  [
    "diff of a directory",
    "edited",
    "git diff -- src",
    "diff --git a/src/a.ts b/src/a.ts\nindex de98044..a7bc997 100644\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n",
    0,
  ],
  [
    "diff from a subdirectory",
    "edited",
    "cd src && git diff --stat . && git diff --name-only ../docs",
    " src/a.ts | 3 ++-\n 1 file changed, 2 insertions(+), 1 deletion(-)\ndocs/d.md\n",
    0,
  ],
  ["diff of a glob", "edited", "git diff --name-only -- '*.ts' '*.md'", "docs/d.md\nsrc/a.ts\n", 0],
  ["diff --no-pager, --no-color", "edited", "git --no-pager diff --no-color --name-only", "b.txt\ndocs/d.md\nkept.log\nsrc/a.ts\n", 0],
  ["ls-files", "edited", "git ls-files", ".gitignore\nb.txt\ndocs/d.md\nkept.log\nsrc/a.ts\nsrc/lib/l.ts\n", 0],
  ["ls-files -m", "edited", "git ls-files -m", "b.txt\ndocs/d.md\nkept.log\nsrc/a.ts\n", 0],
  ["ls-files -d", "edited", "git ls-files -d", "b.txt\n", 0],
  ["ls-files -o", "edited", "git ls-files -o", 'n e.txt\nnewdir/g\nnewdir/sub/f\nsrc/lib/q.ts\nx.log\n"\\303\\251.txt"\n', 0],
  [
    "ls-files -o --exclude-standard",
    "edited",
    "git ls-files -o --exclude-standard",
    'n e.txt\nnewdir/g\nnewdir/sub/f\nsrc/lib/q.ts\n"\\303\\251.txt"\n',
    0,
  ],
  ["ls-files from a subdirectory", "edited", "cd src && git ls-files && git ls-files -o", "a.ts\nlib/l.ts\nlib/q.ts\n", 0],
  ["ls-files of a path", "edited", "git ls-files docs src/lib", "docs/d.md\nsrc/lib/l.ts\n", 0],
  ["ls-files -z", "edited", "git ls-files -z | tr '\\0' '|'", ".gitignore|b.txt|docs/d.md|kept.log|src/a.ts|src/lib/l.ts|", 0],
  ["show HEAD:path", "edited", "git show HEAD:src/a.ts", "a\nb\nc\n", 0],
  ["show HEAD:./path from a subdirectory", "edited", "cd src && git show HEAD:./a.ts && git show HEAD:../b.txt", "a\nb\nc\nx\n", 0],
  ["show :path and cat-file -p", "edited", "git show :b.txt; git cat-file -p HEAD:docs/d.md", "x\ndoc\n", 0],
  ["show of a path not in HEAD", "edited", "git show HEAD:newdir/g; echo $?", "128\n", 0],
  [
    "restore a file",
    "edited",
    "git restore src/a.ts && git status -s && cat src/a.ts",
    ' D b.txt\n M docs/d.md\n M kept.log\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\na\nb\nc\n',
    0,
  ],
  [
    "restore a deleted file",
    "edited",
    "git restore b.txt && cat b.txt && git status -s",
    'x\n M docs/d.md\n M kept.log\n M src/a.ts\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n',
    0,
  ],
  ["checkout -- .", "edited", "git checkout -- . && git status -s", '?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n', 0],
  [
    "restore the executable bit",
    "edited",
    "git restore docs/d.md && git diff --stat",
    " b.txt    | 1 -\n kept.log | 1 +\n src/a.ts | 3 ++-\n 3 files changed, 3 insertions(+), 2 deletions(-)\n",
    0,
  ],
  [
    "restore from a subdirectory",
    "edited",
    "cd src && git restore . && git status -s",
    ' D ../b.txt\n M ../docs/d.md\n M ../kept.log\n?? "../n e.txt"\n?? ../newdir/\n?? lib/q.ts\n?? "../\\303\\251.txt"\n',
    0,
  ],
  ["restore of an untracked path", "edited", "git restore newdir; echo $?; git status -s newdir", "1\n?? newdir/\n", 0],
  [
    "rev-parse from a subdirectory",
    "edited",
    "cd src/lib && git rev-parse --show-prefix --show-cdup --is-inside-work-tree --abbrev-ref HEAD",
    "src/lib/\n../../\ntrue\nmain\n",
    0,
  ],
  ["rev-parse at the root", "edited", "git rev-parse --show-prefix --show-cdup | sed 's/$/|/'", "|\n|\n", 0],
  ["clean status", "clean", "git status", "On branch main\nnothing to commit, working tree clean\n", 0],
  ["clean short status and diff", "clean", "git status -s; git diff; git diff --stat; echo $?", "0\n", 0],
  [
    "only untracked files",
    "untracked",
    "git status",
    'On branch main\nUntracked files:\n  (use "git add <file>..." to include in what will be committed)\n\tb.txt\n\td/\n\nnothing added to commit but untracked files present (use "git add" to track)\n',
    0,
  ],
  ["only untracked, short", "untracked", "git status -s; git status -s -uall", "?? b.txt\n?? d/\n?? b.txt\n?? d/e/f.txt\n", 0],
  [
    "untracked left out, nothing else",
    "untracked",
    "git status -uno",
    "On branch main\nnothing to commit (use -u to show untracked files)\n",
    0,
  ],
  [
    "rewritten with the same bytes",
    "rewritten",
    "git status -s; git diff; git status",
    "On branch main\nnothing to commit, working tree clean\n",
    0,
  ],
  [
    "binary diff",
    "binary",
    "git diff",
    "diff --git a/img.bin b/img.bin\nindex 262079d..66261c7 100644\nBinary files a/img.bin and b/img.bin differ\ndiff --git a/t.txt b/t.txt\nindex 718f4d2..393b55b 100644\n--- a/t.txt\n+++ b/t.txt\n@@ -1 +1,2 @@\n t\n+u\n",
    0,
  ],
  [
    "binary --stat and --numstat",
    "binary",
    "git diff --stat; git diff --numstat",
    " img.bin | Bin 5 -> 7 bytes\n t.txt   |   1 +\n 2 files changed, 1 insertion(+)\n-\t-\timg.bin\n1\t0\tt.txt\n",
    0,
  ],
  [
    "--stat scaled to 80 columns",
    "large",
    "git diff --stat",
    " .../goes/on/and/on/and/on/file-with-a-long-name.ts | 222 ++++++++++-----------\n mid.txt                                            |  20 --\n short.txt                                          |   1 +\n 3 files changed, 112 insertions(+), 131 deletions(-)\n",
    0,
  ],
  [
    "--numstat and --shortstat",
    "large",
    "git diff --numstat --shortstat",
    "111\t111\ta/very/long/directory/name/that/goes/on/and/on/and/on/file-with-a-long-name.ts\n0\t20\tmid.txt\n1\t0\tshort.txt\n 3 files changed, 112 insertions(+), 131 deletions(-)\n",
    0,
  ],
  [
    "empty files, no final newline, far hunks, a deleted directory",
    "edges",
    "git diff",
    "diff --git a/docs/x.md b/docs/x.md\ndeleted file mode 100644\nindex 587be6b..0000000\n--- a/docs/x.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/docs/y.md b/docs/y.md\ndeleted file mode 100644\nindex 975fbec..0000000\n--- a/docs/y.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\ndiff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\nindex e69de29..0000000\ndiff --git a/far.txt b/far.txt\nindex 749b185..dfd88a2 100644\n--- a/far.txt\n+++ b/far.txt\n@@ -1,6 +1,6 @@\n 0\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -23,7 +23,7 @@\n 22\n 23\n 24\n-25\n+twenty-five\n 26\n 27\n 28\ndiff --git a/nonl.txt b/nonl.txt\nindex 0a207c0..817f660 100644\n--- a/nonl.txt\n+++ b/nonl.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
    0,
  ],
  [
    "their status",
    "edges",
    "git status -s; git status -s -uall",
    " D docs/x.md\n D docs/y.md\n D empty.txt\n M far.txt\n M nonl.txt\n?? new-empty.txt\n D docs/x.md\n D docs/y.md\n D empty.txt\n M far.txt\n M nonl.txt\n?? new-empty.txt\n",
    0,
  ],
  [
    "status of absolute paths",
    "edited",
    "git status -s $PWD/src $PWD/b.txt && cd src && git diff --stat $PWD/a.ts",
    " D b.txt\n M src/a.ts\n?? src/lib/q.ts\n src/a.ts | 3 ++-\n 1 file changed, 2 insertions(+), 1 deletion(-)\n",
    0,
  ],
  [
    "restore of an absolute path",
    "edited",
    "git restore $PWD/src/a.ts && git status -s",
    ' D b.txt\n M docs/d.md\n M kept.log\n?? "n e.txt"\n?? newdir/\n?? src/lib/q.ts\n?? "\\303\\251.txt"\n',
    0,
  ],
  [
    "exclude magic",
    "edited",
    "git status -s -- ':!src' && git diff --name-only -- . ':(exclude)docs' && git ls-files -- ':^src'",
    ' D b.txt\n M docs/d.md\n M kept.log\n?? "n e.txt"\n?? newdir/\n?? "\\303\\251.txt"\nb.txt\nkept.log\nsrc/a.ts\n.gitignore\nb.txt\ndocs/d.md\nkept.log\n',
    0,
  ],
  ["top magic from a subdirectory", "edited", "cd src && git diff --name-only -- ':/docs' ':(top)b.txt'", "b.txt\ndocs/d.md\n", 0],
  ["many plain paths", "edited", "git ls-files $(seq -f 'x%g' 2000) src docs | head -3", "docs/d.md\nsrc/a.ts\nsrc/lib/l.ts\n", 0],
  [
    "ignored files by directory",
    "ignored",
    "git status --ignored",
    'On branch main\nChanges not staged for commit:\n  (use "git add <file>..." to update what will be committed)\n  (use "git restore <file>..." to discard changes in working directory)\n\tmodified:   a b.txt\n\nUntracked files:\n  (use "git add <file>..." to include in what will be committed)\n\tu/\n\nIgnored files:\n  (use "git add -f <file>..." to include in what will be committed)\n\tbuild/\n\tu/v/\n\nno changes added to commit (use "git add" and/or "git commit -a")\n',
    0,
  ],
  [
    "ignored files one by one with -uall",
    "ignored",
    "git status --ignored -s -uall",
    ' M "a b.txt"\n?? u/z.txt\n!! build/o\n!! u/v/w.log\n',
    0,
  ],
  [
    "a name with a space in a diff",
    "ignored",
    "git diff",
    "diff --git a/a b.txt b/a b.txt\nindex 587be6b..b77b4eb 100644\n--- a/a b.txt\t\n+++ b/a b.txt\t\n@@ -1 +1,2 @@\n x\n+y\n",
    0,
  ],
  [
    "restore a deleted directory",
    "edges",
    "git restore docs && cat docs/x.md docs/y.md && git status -s",
    "x\ny\n D empty.txt\n M far.txt\n M nonl.txt\n?? new-empty.txt\n",
    0,
  ],
];

describe("git against git 2.39", () => {
  it.each(GIT)("%s", async (_what, scenario, command, stdout, exitCode) => {
    const { files, setup } = scenarios[scenario]!;
    const fs = new MemoryWorkspaceFs(files);
    const ctx = toolContext(fs, { allowWrite: true });
    expect((await bashTool.execute({ command: setup }, ctx)).exitCode).toBe(0);
    const out = await bashTool.execute({ command: `{ ${command}\n} 2>/dev/null; echo "rc=$?"` }, ctx);
    expect(out.text).toBe(`${stdout}rc=${exitCode}`);
  });
});

describe("what the shell's git does not have", () => {
  const OWN: [string, string, string][] = [
    [
      "history",
      "git log --oneline -5",
      "git: 'log' is not available in this shell. It has status, diff, ls-files, show HEAD:<path>, restore <path> (or checkout -- <path>) and rev-parse, over the uploaded snapshot (HEAD; no history, nothing staged) and this session's changes (the working tree).\n[exit 1]",
    ],
    ["outside the workspace", "cd /tmp && git status", "fatal: not a git repository (or any of the parent directories): .git\n[exit 128]"],
    ["an unknown option", "git status --foo", "error: unknown option `foo'\n[exit 129]"],
    [
      "a revision other than HEAD",
      "git diff HEAD~1",
      "fatal: ambiguous argument 'HEAD~1': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n(This workspace has one commit, HEAD: the snapshot as uploaded.)\n[exit 128]",
    ],
    ["a path outside the workspace", "git ls-files /src", "fatal: /src: '/src' is outside repository at '/workspace'\n[exit 128]"],
    [
      "another source to restore from",
      "git restore --source=HEAD~1 b.txt",
      "fatal: could not resolve 'HEAD~1': the only commit is HEAD\n[exit 128]",
    ],
    [
      "show without a path",
      "git show HEAD",
      "git show: this shell's git shows files as the snapshot has them: git show HEAD:<path> (there are no commits to show)\n[exit 1]",
    ],
  ];
  it.each(OWN)("%s", async (_what, command, expected) => {
    const fs = new MemoryWorkspaceFs(scenarios.edited!.files);
    const out = await bashTool.execute({ command: `${command} 2>&1; echo "[exit $?]"` }, toolContext(fs, { allowWrite: true }));
    expect(out.text).toBe(expected);
  });

  it("restore is a write: refused in a run without writes, nothing changed", async () => {
    const fs = new MemoryWorkspaceFs(scenarios.edited!.files);
    await fs.writeFile("b.txt", new TextEncoder().encode("changed\n"));
    const out = await bashTool.execute({ command: "git restore b.txt" }, toolContext(fs, { allowWrite: false }));
    expect([out.exitCode, out.text.split("\n")[0], fs.text("b.txt")]).toEqual([
      128,
      "fatal: EROFS: read-only file system, write '/workspace/b.txt' (this run does not allow writes)",
      "changed\n",
    ]);
  });

  it("sees what the same command appended before it", async () => {
    const fs = new MemoryWorkspaceFs(scenarios.clean!.files);
    const out = await bashTool.execute(
      { command: "for i in 1 2; do echo $i >> a.txt; done; git diff --numstat" },
      toolContext(fs, { allowWrite: true }),
    );
    expect(out.text).toBe("2\t0\ta.txt");
  });
});
