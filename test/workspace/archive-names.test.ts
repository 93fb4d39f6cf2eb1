import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/workspace/crc32";
import { ingestWorkspace } from "../../src/workspace/ingest";
import type { WorkspaceIndex } from "../../src/workspace/snapshot-layout";
import { concatBytes } from "../../src/workspace/streams";
import {
  decode,
  entry,
  fileEntry,
  gnuLongEntry,
  latin1,
  rawTar,
  rawTarEntry,
  rawZip,
  streamOf,
  tarOf,
  text,
  zip,
  zipExtra,
} from "./archives";

/**
 * Every member is stored under the name its bytes say, or skipped under it: never under another
 * name, where it could push the archive's real file out as duplicate_path.
 */

let counter = 0;

/** Ingests `bytes` (arriving in chunks of `chunkBytes`) and returns what was skipped and every stored file as {path: content}. */
async function stored(bytes: Uint8Array, chunkBytes?: number) {
  const workspaceId = `w_names${++counter}`;
  const result = await ingestWorkspace(env.STORE, streamOf(bytes, chunkBytes), { workspaceId, owner: null });
  const index = (await (await env.STORE.get(`workspaces/${workspaceId}/index.json`))!.json()) as WorkspaceIndex;
  const pack = await env.STORE.get(`workspaces/${workspaceId}/pack/00000`);
  const packBytes = new Uint8Array(pack ? await pack.arrayBuffer() : new ArrayBuffer(0));
  const files = Object.fromEntries(index.files.map((f) => [f.path, decode(packBytes.subarray(f.offset, f.offset + f.size))]));
  return { skipped: result.skipped, files };
}

const BOM = "\uFEFF";

describe("names keep a leading U+FEFF (BOM)", () => {
  it("in a tar: plain names, GNU long names, prefix fields, PAX paths and link targets", async () => {
    const tar = rawTar(
      rawTarEntry(`${BOM}config.json`, "0", text("bom-named file\n")),
      gnuLongEntry("L", `${BOM}long.json`),
      rawTarEntry("././@LongLink", "0", text("long bom-named file\n"), "", { magic: "gnu" }),
      rawTarEntry("x.json", "0", text("in a bom-named dir\n"), "", { prefix: `${BOM}dir` }),
      rawTarEntry("y.json", "0", text("under a bom-only prefix\n"), "", { prefix: BOM }),
      rawTarEntry("link", "2", new Uint8Array(0), `${BOM}config.json`),
      rawTarEntry("config.json", "0", text("the real config\n")),
      rawTarEntry("long.json", "0", text("the real long\n")),
      rawTarEntry("dir/x.json", "0", text("the real x\n")),
    );
    const pax = await tarOf({}, [fileEntry(`${BOM}pax/${"p".repeat(120)}.json`, "pax-named file\n")]);
    for (const chunkBytes of [64 * 1024, 7]) {
      expect(await stored(tar, chunkBytes)).toEqual({
        skipped: [],
        files: {
          [`${BOM}config.json`]: "bom-named file\n",
          [`${BOM}long.json`]: "long bom-named file\n",
          [`${BOM}dir/x.json`]: "in a bom-named dir\n",
          [`${BOM}/y.json`]: "under a bom-only prefix\n",
          link: "bom-named file\n",
          "config.json": "the real config\n",
          "long.json": "the real long\n",
          "dir/x.json": "the real x\n",
        },
      });
    }
    expect((await stored(pax)).files).toEqual({ [`${BOM}pax/${"p".repeat(120)}.json`]: "pax-named file\n" });
  });

  it("in a zip: names and symlink targets", async () => {
    const archive = zip({
      [`${BOM}config.json`]: text("bom-named file\n"),
      "config.json": text("the real config\n"),
      link: [text(`${BOM}config.json`), { level: 0, os: 3, attrs: (0o120777 << 16) >>> 0 }],
    });
    expect(await stored(archive)).toEqual({
      skipped: [],
      files: { [`${BOM}config.json`]: "bom-named file\n", "config.json": "the real config\n", link: "bom-named file\n" },
    });
  });
});

describe("U+FFFD in a name that is UTF-8 is a character like any other", () => {
  it("is stored from a tar; a name that is not UTF-8 (shown with U+FFFD) is still path_invalid", async () => {
    const tar = rawTar(
      rawTarEntry("r\uFFFDsum\u00e9.txt", "0", text("valid utf-8\n")),
      rawTarEntry(latin1("caf\u00e9.txt"), "0", text("latin-1 name\n")),
      rawTarEntry("caf\uFFFD.txt", "0", text("a real U+FFFD\n")),
      // Targets that are not UTF-8 name no stored file, not the one whose name has a real U+FFFD.
      rawTarEntry("lnk", "2", new Uint8Array(0), latin1("caf\u00e9.txt")),
      rawTarEntry("hard", "1", new Uint8Array(0), latin1("caf\u00e9.txt")),
    );
    expect(await stored(tar)).toEqual({
      skipped: [
        { path: "caf\uFFFD.txt", reason: "path_invalid" },
        { path: "lnk", reason: "symlink_unresolved" },
        { path: "hard", reason: "hard_link_unresolved" },
      ],
      files: { "r\uFFFDsum\u00e9.txt": "valid utf-8\n", "caf\uFFFD.txt": "a real U+FFFD\n" },
    });
  });

  it("is stored from a zip; a symlink target that is not UTF-8 is symlink_unresolved", async () => {
    const archive = rawZip([
      { name: "r\uFFFDsum\u00e9.txt", data: "valid utf-8\n", flags: 0x800 },
      { name: "caf\uFFFD.txt", data: "a real U+FFFD\n", flags: 0x800 },
      { name: "lnk", data: latin1("caf\u00e9.txt"), attributes: (0o120777 << 16) >>> 0 },
    ]);
    expect(await stored(archive)).toEqual({
      skipped: [{ path: "lnk", reason: "symlink_unresolved" }],
      files: { "r\uFFFDsum\u00e9.txt": "valid utf-8\n", "caf\uFFFD.txt": "a real U+FFFD\n" },
    });
  });
});

describe("a backslash in a zip name", () => {
  it("is a character of the name in a zip made on Unix: path_invalid, as in a tar, and the real file stays", async () => {
    const archive = rawZip([
      { name: "a\\b.txt", data: "from a\\b.txt\n" },
      { name: "a/b.txt", data: "the real a/b.txt\n" },
      { name: "mac\\c.txt", data: "made on macOS\n", madeBy: (19 << 8) | 20 },
      { name: "..\\..\\up.txt", data: "a traversal is still an escape\n" },
    ]);
    expect(await stored(archive)).toEqual({
      skipped: [
        { path: "a\\b.txt", reason: "path_invalid" },
        { path: "mac\\c.txt", reason: "path_invalid" },
        { path: "..\\..\\up.txt", reason: "path_escape" },
      ],
      files: { "a/b.txt": "the real a/b.txt\n" },
    });
  });

  it("is a separator in a zip made on MS-DOS, Windows NTFS or VFAT (Windows tools write it)", async () => {
    const archive = rawZip([
      { name: "dos\\a.txt", data: "fat\n", madeBy: (0 << 8) | 20, attributes: 0x20 },
      { name: "ntfs\\b.txt", data: "ntfs\n", madeBy: (10 << 8) | 20, attributes: 0x20 },
      { name: "vfat\\c.txt", data: "vfat\n", madeBy: (14 << 8) | 20, attributes: 0x20 },
    ]);
    expect(await stored(archive)).toEqual({
      skipped: [],
      files: { "dos/a.txt": "fat\n", "ntfs/b.txt": "ntfs\n", "vfat/c.txt": "vfat\n" },
    });
  });
});

describe("the Info-ZIP Unicode Path extra field (0x7075)", () => {
  const cp437 = latin1("caf\x82.txt"); // é in code page 437, no UTF-8 flag: not UTF-8
  const unicodePath = (version: number, crc: number, name: string) => {
    const field = new Uint8Array(5);
    field[0] = version;
    new DataView(field.buffer).setUint32(1, crc, true);
    return zipExtra(0x7075, concatBytes([field, text(name)]));
  };
  const windowsZip = (extra: Uint8Array) =>
    rawZip([{ name: cp437, data: "windows zip\n", madeBy: (0 << 8) | 20, attributes: 0x20, extra }]);

  it("gives the UTF-8 name of a name stored in an OEM code page", async () => {
    expect(await stored(windowsZip(unicodePath(1, crc32(cp437), "caf\u00e9.txt")))).toEqual({
      skipped: [],
      files: { "caf\u00e9.txt": "windows zip\n" },
    });
  });

  it("is ignored when its CRC-32 is not that of the name field, or its version is not 1", async () => {
    for (const extra of [unicodePath(1, crc32(cp437) ^ 1, "caf\u00e9.txt"), unicodePath(2, crc32(cp437), "caf\u00e9.txt")]) {
      expect(await stored(windowsZip(extra))).toEqual({ skipped: [{ path: "caf\uFFFD.txt", reason: "path_invalid" }], files: {} });
    }
  });
});

describe("tar headers that are not members", () => {
  it("a GNU volume label (`tar -V`) makes no file; GNU's old sparse members are sparse_file", async () => {
    const tar = rawTar(
      rawTarEntry("Backup 2024-01-01", "V", new Uint8Array(0), "", { magic: "gnu" }),
      rawTarEntry("src.txt", "0", text("content\n"), "", { magic: "gnu" }),
      rawTarEntry("disk.img", "S", text("the data without its holes"), "", { magic: "gnu" }),
    );
    expect(await stored(tar)).toEqual({ skipped: [{ path: "disk.img", reason: "sparse_file" }], files: { "src.txt": "content\n" } });
  });

  it("reads sizes from PAX records and skips link data, in chunks of any size", async () => {
    const long = `${"d".repeat(150)}/${"f".repeat(120)}.txt`;
    const tar = await tarOf({}, [
      fileEntry(long, "x".repeat(1000)),
      entry("sub/", "directory"),
      entry(`sub/${"l".repeat(120)}`, "symlink", { linkname: `../${"t".repeat(110)}` }),
      fileEntry("after.txt", "after\n"),
    ]);
    for (const chunkBytes of [64 * 1024, 512, 1]) {
      expect(await stored(tar, chunkBytes)).toEqual({
        skipped: [{ path: `sub/${"l".repeat(120)}`, reason: "symlink_unresolved" }],
        files: { [long]: "x".repeat(1000), "after.txt": "after\n" },
      });
    }
  });
});
