import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { httpStatus } from "../../src/domain";
import { ArchiveError } from "../../src/workspace/archive-errors";
import { crc32 } from "../../src/workspace/crc32";
import { ingestWorkspace } from "../../src/workspace/ingest";
import type { IngestLimits } from "../../src/workspace/limits";
import { concatBytes } from "../../src/workspace/streams";
import {
  centralDirectory,
  decode,
  entry,
  fileEntry,
  gzip,
  keysUnder,
  latin1,
  rawTar,
  rawTarEntry,
  rawZip,
  streamOf,
  tarOf,
  text,
  zip,
  zipExtra,
  zipWithDataDescriptors,
} from "./archives";

const NOW = () => new Date("2026-05-01T12:00:00.000Z");
let counter = 0;
const nextId = () => `w_ingest${++counter}`;

async function ingest(
  bytes: Uint8Array,
  opts: { contentType?: string; limits?: Partial<IngestLimits>; id?: string; chunkBytes?: number } = {},
) {
  const workspaceId = opts.id ?? nextId();
  const result = await ingestWorkspace(env.STORE, streamOf(bytes, opts.chunkBytes), {
    workspaceId,
    owner: "alice",
    contentType: opts.contentType,
    limits: opts.limits,
    now: NOW,
  });
  return { workspaceId, result };
}

async function json(key: string): Promise<unknown> {
  const object = await env.STORE.get(key);
  return object ? object.json() : null;
}

async function refusal(bytes: Uint8Array, opts: { contentType?: string; limits?: Partial<IngestLimits> } = {}) {
  const id = nextId();
  const error = await ingest(bytes, { ...opts, id }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ArchiveError);
  const api = error as ArchiveError;
  return { status: httpStatus(api.code), code: api.code, message: api.message, left: await keysUnder(env.STORE, `workspaces/${id}/`) };
}

describe("ingestWorkspace: tar", () => {
  it("stores a pack, a sorted index and a meta, and reports counts", async () => {
    const tar = await tarOf({}, [
      entry("src/", "directory", { mode: 0o755 }),
      fileEntry("src/b.ts", "export const b = 2;\n"),
      fileEntry("README.md", "# hi\n"),
      fileEntry("bin/run.sh", "#!/bin/sh\n", 0o755),
      entry("empty/", "directory"),
    ]);
    const { workspaceId, result } = await ingest(tar);
    expect(result).toEqual({ workspaceId, files: 3, bytes: 20 + 5 + 10, skipped: [] });
    expect(await keysUnder(env.STORE, `workspaces/${workspaceId}/`)).toEqual([
      `workspaces/${workspaceId}/index.json`,
      `workspaces/${workspaceId}/meta.json`,
      `workspaces/${workspaceId}/pack/00000`,
      `workspaces/${workspaceId}/search/directory`,
      `workspaces/${workspaceId}/search/postings-0000`,
    ]);
    expect(await json(`workspaces/${workspaceId}/index.json`)).toEqual({
      version: 1,
      files: [
        { path: "README.md", offset: 20, size: 5, mode: 0o644 },
        { path: "bin/run.sh", offset: 25, size: 10, mode: 0o755 },
        { path: "src/b.ts", offset: 0, size: 20, mode: 0o644 },
      ],
      dirs: ["bin", "empty", "src"],
      pack: { chunkBytes: 8 * 1024 * 1024, chunks: 1 },
      search: { version: 3, shards: 1, files: 3, directoryBytes: expect.any(Number) },
    });
    expect(await json(`workspaces/${workspaceId}/meta.json`)).toEqual({
      workspaceId,
      owner: "alice",
      format: "tar",
      files: 3,
      bytes: 35,
      createdAt: "2026-05-01T12:00:00.000Z",
    });
    const pack = await env.STORE.get(`workspaces/${workspaceId}/pack/00000`);
    expect(decode(await pack!.arrayBuffer())).toBe("export const b = 2;\n# hi\n#!/bin/sh\n");
  });

  it("accepts long names (PAX) and canonicalises ./ prefixes", async () => {
    const long = `${"d".repeat(120)}/${"f".repeat(60)}.txt`;
    const { workspaceId, result } = await ingest(await tarOf({ [long]: "x", "./a/./b.txt": "y" }));
    expect(result.files).toBe(2);
    const index = (await json(`workspaces/${workspaceId}/index.json`)) as { files: { path: string }[] };
    expect(index.files.map((f) => f.path)).toEqual(["a/b.txt", long]);
  });

  it("never stores a tar name under another path: a backslash or a name that was not UTF-8 is path_invalid; PAX sparse files are sparse_file", async () => {
    const sparse = fileEntry("./GNUSparseFile.1006/disk.img", "map and data blocks, not the file");
    sparse.header.pax = {
      "GNU.sparse.major": "1",
      "GNU.sparse.minor": "0",
      "GNU.sparse.name": "disk.img",
      "GNU.sparse.realsize": "1048576",
    };
    const tar = concatBytes([
      // Latin-1 é: a name that is not UTF-8 (modern-tar shows it as "caf\uFFFD.txt").
      rawTarEntry(latin1("caf\u00e9.txt"), "0", text("x")),
      await tarOf({}, [fileEntry("a\\b.txt", "backslash file"), fileEntry("a/b.txt", "real nested file"), sparse]),
    ]);
    const { workspaceId, result } = await ingest(tar);
    expect(result.skipped).toEqual([
      { path: "caf\uFFFD.txt", reason: "path_invalid" },
      { path: "a\\b.txt", reason: "path_invalid" },
      { path: "disk.img", reason: "sparse_file" },
    ]);
    const index = (await json(`workspaces/${workspaceId}/index.json`)) as { files: { path: string; size: number }[] };
    expect(index.files.map((f) => [f.path, f.size])).toEqual([["a/b.txt", 16]]);
  });

  it("a zip name that was not UTF-8 is path_invalid, not stored under U+FFFD", async () => {
    const bytes = zip({ "cafX.txt": text("one"), "ok.txt": text("two") });
    // The name's "X" as Latin-1 é, with no UTF-8 flag: not UTF-8.
    for (let i = 0; i + 8 <= bytes.length; i++) if (decode(bytes.subarray(i, i + 8)) === "cafX.txt") bytes[i + 3] = 0xe9;
    const { result } = await ingest(bytes);
    expect(result.skipped).toEqual([{ path: "caf\uFFFD.txt", reason: "path_invalid" }]);
  });

  it("skips hostile entries with stable reasons, in archive order", async () => {
    const tar = await tarOf({}, [
      fileEntry("ok.txt", "fine"),
      fileEntry("../escape.txt", "x"),
      fileEntry("/etc/passwd", "x"),
      fileEntry("C:\\evil.txt", "x"),
      fileEntry("a/../../up.txt", "x"),
      entry("link-out", "symlink", { linkname: "../../etc" }),
      entry("link-abs", "symlink", { linkname: "/etc/passwd" }),
      entry("hard-out", "link", { linkname: "../outside" }),
      entry("hard-abs", "link", { linkname: "/etc/shadow" }),
      entry("dev/tty", "character-device"),
      entry("dev/sda", "block-device"),
      entry("pipe", "fifo"),
      fileEntry("ok.txt", "second copy"),
      fileEntry("./ok.txt", "third copy"),
      fileEntry("ok.txt/child", "under a file"),
      entry("link-in", "symlink", { linkname: "ok.txt" }),
      entry("sub/link-up", "symlink", { linkname: "../ok.txt" }),
      entry("hard-in", "link", { linkname: "ok.txt" }),
      entry("link-dir", "symlink", { linkname: "dev" }),
      // Named as `tar cf x.tar -C dir .` names entries: listed as written, like every other skip (hunt 64 F5).
      entry("./link-missing", "symlink", { linkname: "nope.txt" }),
      entry("hard-missing", "link", { linkname: "nope.txt" }),
    ]);
    const { workspaceId, result } = await ingest(tar);
    expect(result.skipped).toEqual([
      { path: "../escape.txt", reason: "path_escape" },
      { path: "/etc/passwd", reason: "path_escape" },
      { path: "C:\\evil.txt", reason: "path_escape" },
      { path: "a/../../up.txt", reason: "path_escape" },
      { path: "link-out", reason: "symlink_outside" },
      { path: "link-abs", reason: "symlink_outside" },
      { path: "hard-out", reason: "hard_link_outside" },
      { path: "hard-abs", reason: "hard_link_outside" },
      { path: "dev/tty", reason: "device_file" },
      { path: "dev/sda", reason: "device_file" },
      { path: "pipe", reason: "special_file" },
      { path: "ok.txt", reason: "duplicate_path" },
      { path: "./ok.txt", reason: "duplicate_path" },
      { path: "ok.txt/child", reason: "path_conflict" },
      { path: "link-dir", reason: "symlink_unresolved" },
      { path: "./link-missing", reason: "symlink_unresolved" },
      { path: "hard-missing", reason: "hard_link_unresolved" },
    ]);
    // Links that resolve to a file inside become index entries over the same pack bytes.
    expect(await json(`workspaces/${workspaceId}/index.json`)).toEqual({
      version: 1,
      files: [
        { path: "hard-in", offset: 0, size: 4, mode: 0o644 },
        { path: "link-in", offset: 0, size: 4, mode: 0o644 },
        { path: "ok.txt", offset: 0, size: 4, mode: 0o644 },
        { path: "sub/link-up", offset: 0, size: 4, mode: 0o644 },
      ],
      dirs: ["sub"],
      pack: { chunkBytes: 8 * 1024 * 1024, chunks: 1 },
      // One stored file: the links share its bytes and its entry in the search index.
      search: { version: 3, shards: 1, files: 1, directoryBytes: expect.any(Number) },
    });
    expect(result).toMatchObject({ files: 4, bytes: 16 });
  });

  it("skips a path over 4096 characters as path_too_long, not as an escape, and keeps one at the limit", async () => {
    const tooLong = `${"d".repeat(100)}/${"f".repeat(4900 - 1)}`;
    const atLimit = `${"e".repeat(100)}/${"g".repeat(4096 - 101)}`;
    const { workspaceId, result } = await ingest(await tarOf({ [tooLong]: "x", [atLimit]: "y", "ok.txt": "z" }));
    expect(tooLong).toHaveLength(5000);
    expect(result.skipped).toEqual([{ path: tooLong, reason: "path_too_long" }]);
    const index = (await json(`workspaces/${workspaceId}/index.json`)) as { files: { path: string }[]; dirs: string[] };
    expect(index.files.map((f) => f.path)).toEqual([atLimit, "ok.txt"]);
    expect(index.dirs).toEqual(["e".repeat(100)]);
  });

  it("skips a file over the file limit but keeps the rest", async () => {
    const tar = await tarOf({ "big.bin": new Uint8Array(2000), "small.txt": "ok" });
    const { result } = await ingest(tar, { limits: { maxFileBytes: 1000 } });
    expect(result.skipped).toEqual([{ path: "big.bin", reason: "file_too_large" }]);
    expect(result.files).toBe(1);
  });

  it("checks hand-made headers: backslash traversal and drive-letter link targets", async () => {
    const tar = rawTar(
      rawTarEntry("..\\..\\win.txt", "0", text("x")),
      rawTarEntry("lnk", "2", new Uint8Array(0), "C:\\Windows"),
      rawTarEntry("hl", "1", new Uint8Array(0), "C:/x"),
      rawTarEntry("fine.txt", "0", text("y")),
    );
    const { result } = await ingest(tar);
    expect(result.skipped).toEqual([
      { path: "..\\..\\win.txt", reason: "path_escape" },
      { path: "lnk", reason: "symlink_outside" },
      { path: "hl", reason: "hard_link_outside" },
    ]);
    expect(result).toMatchObject({ files: 1, bytes: 1 });
  });
});

describe("ingestWorkspace: refusals leave nothing behind", () => {
  it("refuses more entries than allowed with 413 archive_too_many_files", async () => {
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, "x"]));
    expect(await refusal(await tarOf(files), { limits: { maxArchiveFiles: 5 } })).toEqual({
      status: 413,
      code: "archive_too_many_files",
      message: "archive has more than 5 entries",
      left: [],
    });
  });

  it("refuses entries whose names add up past the limit with 413 archive_too_many_files, skipped ones counted", async () => {
    const tar = await tarOf({ "../escape.txt": "x", "abcdefghij.txt": "y", "z.txt": "z" });
    expect(await refusal(tar, { limits: { maxPathChars: 31 } })).toEqual({
      status: 413,
      code: "archive_too_many_files",
      message: "the names of the archive's first 3 entries add up to more than 31 characters (a workspace's paths are held in memory)",
      left: [],
    });
    expect((await ingest(tar, { limits: { maxPathChars: 32 } })).result).toMatchObject({ files: 2 });
  });

  it("refuses files adding up past the total limit with 413 archive_too_large", async () => {
    const tar = await tarOf({ "a.bin": new Uint8Array(600), "b.bin": new Uint8Array(600) });
    expect(await refusal(tar, { limits: { maxTotalBytes: 1000 } })).toEqual({
      status: 413,
      code: "archive_too_large",
      message: "the archive's files add up to more than 1000 bytes",
      left: [],
    });
  });

  it("refuses an upload over the archive limit with 413 archive_too_large", async () => {
    const tar = await tarOf({ "a.bin": new Uint8Array(5000) });
    expect(await refusal(tar, { limits: { maxArchiveBytes: 4096 } })).toEqual({
      status: 413,
      code: "archive_too_large",
      message: "the archive is larger than 4096 bytes",
      left: [],
    });
  });

  it("refuses a gzip bomb while streaming with 422 archive_bomb", async () => {
    const bomb = gzip(await tarOf({ "zeros.bin": new Uint8Array(4 * 1024 * 1024) }));
    const result = await refusal(bomb, { limits: { bombCheckMinBytes: 256 * 1024, maxCompressionRatio: 50 } });
    expect(result).toMatchObject({ status: 422, code: "archive_bomb", left: [] });
    expect(result.message).toMatch(/^the gzip stream expands more than 50x \(\d+ bytes from \d+\); refusing a likely decompression bomb$/);
  });

  it("refuses a zip bomb from its declared sizes with 422 archive_bomb", async () => {
    const bomb = zip({ "zeros.bin": new Uint8Array(2 * 1024 * 1024) });
    expect(await refusal(bomb, { limits: { bombCheckMinBytes: 256 * 1024, maxCompressionRatio: 50 } })).toMatchObject({
      status: 422,
      code: "archive_bomb",
      left: [],
    });
  });

  it("refuses a corrupt tar with 400 archive_invalid", async () => {
    const tar = await tarOf({ "a.txt": "hello" });
    tar[0] = "Z".charCodeAt(0); // breaks the header checksum
    expect(await refusal(tar, { contentType: "application/x-tar" })).toMatchObject({ status: 400, code: "archive_invalid", left: [] });
  });

  it("takes zeros after a tar.gz's gzip data as padding (GNU tar does), in any chunking; a second gzip member stays refused", async () => {
    const tar = await tarOf({ "a.txt": "hello".repeat(1000), "b/c.txt": "c\n" });
    const gz = gzip(tar);
    const padded = new Uint8Array(gz.byteLength + 10_240);
    padded.set(gz);
    for (const chunkBytes of [64 * 1024, 1000, 7]) {
      const { result } = await ingest(padded, { chunkBytes });
      expect([result.files, result.bytes, result.skipped]).toEqual([2, 5002, []]);
    }
    const twoMembers = new Uint8Array([...gz, ...gzip(await tarOf({ "d.txt": "d" }))]);
    expect(await refusal(twoMembers)).toMatchObject({
      status: 400,
      code: "archive_invalid",
      message: "not a valid gzip stream: Trailing bytes after end of compressed data",
    });
    // Zeros past what padding may be are refused as before.
    const long = new Uint8Array(gz.byteLength + 2 * 1024 * 1024);
    long.set(gz);
    expect(await refusal(long)).toMatchObject({ status: 400, code: "archive_invalid" });
  });

  it("refuses a truncated tar.gz with 400 archive_invalid", async () => {
    const gz = gzip(await tarOf({ "a.txt": "hello".repeat(1000) }));
    expect(await refusal(gz.subarray(0, gz.byteLength - 40))).toMatchObject({ status: 400, code: "archive_invalid", left: [] });
  });

  it("refuses an empty body and an unknown format", async () => {
    expect(await refusal(new Uint8Array(0))).toEqual({ status: 400, code: "archive_invalid", message: "the archive is empty", left: [] });
    expect(await refusal(text("just some text"), { contentType: "text/plain" })).toMatchObject({
      status: 415,
      code: "archive_unsupported",
      left: [],
    });
  });
});

describe("ingestWorkspace: tar.gz and zip", () => {
  it("reads a tar.gz the same way as its tar", async () => {
    const tar = await tarOf({ "a.txt": "alpha\n", "dir/b.txt": "beta\n" });
    const plain = await ingest(tar);
    const gzipped = await ingest(gzip(tar));
    expect(gzipped.result).toEqual({ ...plain.result, workspaceId: gzipped.workspaceId });
    expect(await json(`workspaces/${gzipped.workspaceId}/index.json`)).toEqual(await json(`workspaces/${plain.workspaceId}/index.json`));
    expect(await json(`workspaces/${gzipped.workspaceId}/meta.json`)).toMatchObject({ format: "tar.gz" });
  });

  it("reads stored and deflated zip entries, Unix modes and symlinks (stored or deflated), and removes the spooled upload", async () => {
    const archive = zip({
      "src/": [new Uint8Array(0), { os: 3, attrs: (0o040755 << 16) >>> 0 }],
      "src/main.ts": [text("console.log(1);\n".repeat(50)), { level: 9, os: 3, attrs: (0o100644 << 16) >>> 0 }],
      "run.sh": [text("#!/bin/sh\n"), { level: 0, os: 3, attrs: (0o100755 << 16) >>> 0 }],
      "link.ts": [text("src/main.ts"), { level: 0, os: 3, attrs: (0o120777 << 16) >>> 0 }],
      // Python's and Go's zip writers deflate a link's target too (hunt 64 F1).
      "deflated-link.ts": [text("src/main.ts"), { level: 9, os: 3, attrs: (0o120777 << 16) >>> 0 }],
      evil: [text("../../etc/passwd"), { level: 0, os: 3, attrs: (0o120777 << 16) >>> 0 }],
      "../zip-slip.txt": [text("x"), { level: 0 }],
      "dos.txt": [text("dos"), { level: 6 }],
    });
    const { workspaceId, result } = await ingest(archive);
    expect(result).toEqual({
      workspaceId,
      files: 5,
      bytes: 800 + 10 + 800 + 800 + 3,
      skipped: [
        { path: "evil", reason: "symlink_outside" },
        { path: "../zip-slip.txt", reason: "path_escape" },
      ],
    });
    expect(await json(`workspaces/${workspaceId}/index.json`)).toEqual({
      version: 1,
      files: [
        { path: "deflated-link.ts", offset: 0, size: 800, mode: 0o644 },
        { path: "dos.txt", offset: 810, size: 3, mode: 0o644 },
        { path: "link.ts", offset: 0, size: 800, mode: 0o644 },
        { path: "run.sh", offset: 800, size: 10, mode: 0o755 },
        { path: "src/main.ts", offset: 0, size: 800, mode: 0o644 },
      ],
      dirs: ["src"],
      pack: { chunkBytes: 8 * 1024 * 1024, chunks: 1 },
      search: { version: 3, shards: 1, files: 3, directoryBytes: expect.any(Number) },
    });
    expect(await keysUnder(env.STORE, `workspaces/${workspaceId}/`)).toEqual([
      `workspaces/${workspaceId}/index.json`,
      `workspaces/${workspaceId}/meta.json`,
      `workspaces/${workspaceId}/pack/00000`,
      `workspaces/${workspaceId}/search/directory`,
      `workspaces/${workspaceId}/search/postings-0000`,
    ]);
  });

  it("reports duplicate zip paths (after canonicalisation) and device entries", async () => {
    const archive = zip({
      "a.txt": text("first"),
      "./a.txt": text("second"),
      "dev/null": [new Uint8Array(0), { os: 3, attrs: (0o020666 << 16) >>> 0 }],
    });
    const { result } = await ingest(archive);
    expect(result.skipped).toEqual([
      { path: "./a.txt", reason: "duplicate_path" },
      { path: "dev/null", reason: "device_file" },
    ]);
  });

  it("skips encrypted zip entries, and refuses a zip whose every file is encrypted with 415 (not an empty workspace)", async () => {
    /** Sets the "encrypted" flag of the named entries in their local and central headers. */
    const encrypt = (archive: Uint8Array, names: string[]) => {
      const view = new DataView(archive.buffer, archive.byteOffset, archive.byteLength);
      for (let at = 0; at + 46 <= archive.byteLength; at++) {
        const signature = view.getUint32(at, true);
        const [flags, nameLength, nameAt] =
          signature === 0x04034b50
            ? [at + 6, view.getUint16(at + 26, true), at + 30]
            : signature === 0x02014b50
              ? [at + 8, view.getUint16(at + 28, true), at + 46]
              : [0, 0, 0];
        if (flags === 0 || !names.includes(new TextDecoder().decode(archive.subarray(nameAt, nameAt + nameLength)))) continue;
        view.setUint16(flags, view.getUint16(flags, true) | 1, true);
      }
      return archive;
    };
    const entries = () => zip({ "a.txt": [text("alpha"), { level: 0 }], "b.txt": [text("beta"), { level: 0 }] });
    const { result } = await ingest(encrypt(entries(), ["a.txt"]));
    expect(result).toMatchObject({ files: 1, skipped: [{ path: "a.txt", reason: "encrypted" }] });
    expect(await refusal(encrypt(entries(), ["a.txt", "b.txt"]))).toEqual({
      status: 415,
      code: "archive_unsupported",
      message: "every file of this zip is encrypted (2); upload it unencrypted",
      left: [],
    });
    // An archive with no files at all is an empty workspace, as `tar -cf x.tar -C empty .` makes.
    expect((await ingest(zip({}))).result).toMatchObject({ files: 0, skipped: [] });
  });

  it("refuses a stored zip entry whose data does not match its CRC-32, naming the entry", async () => {
    const archive = zip({ "a.txt": [text("alpha"), { level: 0 }], "b.txt": [text("hello world"), { level: 0 }] });
    const at = archive.findIndex((_, i) => decode(archive.subarray(i, i + 11)) === "hello world");
    archive[at + 10] = "D".charCodeAt(0); // "hello worlD": same length, different CRC-32
    expect(await refusal(archive)).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip entry 'b.txt' fails its CRC-32 check (content 0x3624314d, archive says 0x0d4a1185)",
      left: [],
    });
  });

  it("refuses a deflated zip entry whose CRC-32 in the central directory is wrong", async () => {
    const archive = zip({ "ok.txt": text("fine"), "src/main.ts": [text("console.log(1);\n".repeat(50)), { level: 9 }] });
    const { crcAt } = centralDirectory(archive).find((r) => r.name === "src/main.ts")!;
    archive[crcAt] = archive[crcAt]! ^ 1;
    expect(await refusal(archive)).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip entry 'src/main.ts' fails its CRC-32 check (content 0x3e90e8a6, archive says 0x3e90e8a7)",
      left: [],
    });
  });

  it("checks zips with data descriptors against the CRC-32 of their central directory", async () => {
    const files = {
      "run.sh": { data: text("#!/bin/sh\n".repeat(300)), level: 0 as const },
      "src/main.ts": { data: text("console.log(1);\n".repeat(50)), level: 6 as const },
    };
    const archive = zipWithDataDescriptors(files);
    const local = new DataView(archive.buffer, archive.byteOffset);
    // The first local header says "sizes and CRC follow the data" (flag bit 3) and holds a zero CRC.
    expect([local.getUint16(6, true) & 8, local.getUint32(14, true)]).toEqual([8, 0]);
    const { workspaceId, result } = await ingest(archive);
    expect(result).toEqual({ workspaceId, files: 2, bytes: 3000 + 800, skipped: [] });
    const pack = await env.STORE.get(`workspaces/${workspaceId}/pack/00000`);
    expect(decode(await pack!.arrayBuffer())).toBe("#!/bin/sh\n".repeat(300) + "console.log(1);\n".repeat(50));

    const tampered = zipWithDataDescriptors(files);
    const { crcAt } = centralDirectory(tampered)[0]!;
    tampered[crcAt + 3] = tampered[crcAt + 3]! ^ 0x80;
    expect(await refusal(tampered)).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip entry 'run.sh' fails its CRC-32 check (content 0xca7161a8, archive says 0x4a7161a8)",
      left: [],
    });
  });

  it("refuses a zip whose local header offset is at or past its central directory with 400 archive_invalid (not a 500)", async () => {
    const entry = { name: "a.txt", data: "a\n" };
    // 37 bytes of local header, name and data: the central directory starts at 37.
    expect(await refusal(rawZip([{ ...entry, localOffsetDelta: 200 }]))).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip entry 'a.txt' lies outside the archive's data (local header at 200, 2 bytes; central directory at 37)",
      left: [],
    });
    expect(await refusal(rawZip([{ ...entry, localOffsetDelta: 38 }]))).toMatchObject({ status: 400, code: "archive_invalid", left: [] });
    // Data that would run into the central directory.
    expect(await refusal(rawZip([{ ...entry, localOffsetDelta: 6 }]))).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip entry 'a.txt' lies outside the archive's data (local header at 6, 2 bytes; central directory at 37)",
      left: [],
    });
  });

  it("refuses a zip whose end records point outside it with 400 archive_invalid", async () => {
    const archive = rawZip([{ name: "a.txt", data: "a\n" }]);
    const eocd = archive.byteLength - 22;
    const withEocd = (edit: (view: DataView) => void) => {
      const copy = archive.slice();
      edit(new DataView(copy.buffer, eocd));
      return copy;
    };
    // A central directory shorter than one record.
    expect(await refusal(withEocd((v) => v.setUint32(12, 0, true)))).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "not a valid zip archive: corrupt central directory",
      left: [],
    });
    // A zip64 end record (count 0xffff) whose locator points past the end.
    const locator = new DataView(new ArrayBuffer(20));
    locator.setUint32(0, 0x07064b50, true);
    locator.setBigUint64(8, 1n << 40n, true);
    const zip64 = concatBytes([archive.subarray(0, eocd), new Uint8Array(locator.buffer), archive.subarray(eocd)]);
    new DataView(zip64.buffer, zip64.byteLength - 22).setUint16(10, 0xffff, true);
    expect(await refusal(zip64)).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip64 end-of-central-directory record lies outside the archive",
      left: [],
    });
  });

  it("refuses a zip entry that inflates past its declared size", async () => {
    const archive = zip({ "a.txt": [text("a".repeat(1000)), { level: 9 }] });
    // Central directory "uncompressed size" of the only entry: 1000 -> 10 (a lying header).
    const view = new DataView(archive.buffer, archive.byteOffset, archive.byteLength);
    const eocd = archive.byteLength - 22;
    const central = view.getUint32(eocd + 16, true);
    view.setUint32(central + 24, 10, true);
    expect(await refusal(archive)).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip entry 'a.txt' inflates past its declared size",
      left: [],
    });
  });
});

describe("ingestWorkspace: a zip's central directory", () => {
  const files = async (workspaceId: string) => ((await json(`workspaces/${workspaceId}/index.json`)) as { files: unknown[] }).files;
  const u64 = (n: number) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, BigInt(n), true);
    return new Uint8Array(view.buffer);
  };

  it("reads entries in the order of their data when the directory lists them in another", async () => {
    const entries = [
      { name: "a.txt", data: "alpha\n" },
      { name: "b.txt", data: "beta\n" },
      { name: "c.txt", data: "gamma\n" },
    ];
    const { workspaceId, result } = await ingest(rawZip(entries, [2, 0, 1]));
    expect(result).toEqual({ workspaceId, files: 3, bytes: 17, skipped: [] });
    expect(await files(workspaceId)).toEqual([
      { path: "a.txt", offset: 0, size: 6, mode: 0o644 },
      { path: "b.txt", offset: 6, size: 5, mode: 0o644 },
      { path: "c.txt", offset: 11, size: 6, mode: 0o644 },
    ]);
  });

  it("reads thousands of records with comments, streamed in pieces, each entry once", async () => {
    const entries = Array.from({ length: 3000 }, (_, i) => ({
      name: `dir${i % 7}/file-${i}.txt`,
      data: `${i}\n`,
      comment: "c".repeat(i % 300),
    }));
    const { workspaceId, result } = await ingest(rawZip(entries));
    expect(result).toEqual({ workspaceId, files: 3000, bytes: 13890, skipped: [] });
    const stored = (await files(workspaceId)) as { path: string; size: number }[];
    expect(stored.length).toBe(3000);
    expect(stored.find((f) => f.path === "dir3/file-2999.txt")).toEqual({
      path: "dir3/file-2999.txt",
      offset: 13885,
      size: 5,
      mode: 0o644,
    });
  });

  it("refuses two entries whose data overlap with 400 archive_invalid", async () => {
    // a.txt takes 41 bytes (30 of local header, 5 of name, 6 of data): b.txt's record points back at it.
    const archive = rawZip([
      { name: "a.txt", data: "alpha\n" },
      { name: "b.txt", data: "beta\n", localOffsetDelta: -41 },
    ]);
    expect(await refusal(archive)).toEqual({ status: 400, code: "archive_invalid", message: "zip entries overlap at 'b.txt'", left: [] });
  });

  it("takes an entry's local header offset from its zip64 field, and refuses a field too short for it", async () => {
    const saturated = { name: "a.txt", data: "a\n", localOffsetDelta: 0xffffffff };
    const { workspaceId, result } = await ingest(rawZip([{ ...saturated, extra: zipExtra(0x0001, u64(0)) }]));
    expect(result).toEqual({ workspaceId, files: 1, bytes: 2, skipped: [] });
    expect(await refusal(rawZip([{ ...saturated, extra: zipExtra(0x0001, new Uint8Array(4)) }]))).toEqual({
      status: 400,
      code: "archive_invalid",
      message: "zip entry 'a.txt' has a corrupt zip64 field",
      left: [],
    });
  });

  it("refuses names adding up past the limit while it reads the directory, before any entry's data", async () => {
    const archive = rawZip([
      { name: "a.txt", data: "alpha\n" },
      { name: "abcdefghij.txt", data: "y" },
      { name: "z.txt", data: "z" },
    ]);
    archive[35] = "A".charCodeAt(0); // a.txt's first byte of data: its CRC-32 no longer matches
    expect(await refusal(archive, { limits: { maxPathChars: 23 } })).toEqual({
      status: 413,
      code: "archive_too_many_files",
      message: "the names of the archive's first 3 entries add up to more than 23 characters (a workspace's paths are held in memory)",
      left: [],
    });
    // With room for the names, the data is read, and a.txt fails its check.
    const hex = (n: number) => `0x${n.toString(16).padStart(8, "0")}`;
    expect(await refusal(archive, { limits: { maxPathChars: 24 } })).toEqual({
      status: 400,
      code: "archive_invalid",
      message: `zip entry 'a.txt' fails its CRC-32 check (content ${hex(crc32(text("Alpha\n")))}, archive says ${hex(crc32(text("alpha\n")))})`,
      left: [],
    });
  });
});
