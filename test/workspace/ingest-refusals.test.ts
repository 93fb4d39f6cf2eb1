import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { httpStatus } from "../../src/domain";
import { ArchiveError } from "../../src/workspace/archive-errors";
import { ingestWorkspace } from "../../src/workspace/ingest";
import type { IngestLimits } from "../../src/workspace/limits";
import { decode, gzip, keysUnder, noise, streamOf, tarOf, text, zip } from "./archives";
import { multipartLedger } from "./multipart-ledger";

/**
 * Every class of refused upload leaves nothing behind: no object under the workspace prefix, the
 * bucket listing as it was, and every multipart upload it started completed or aborted (recorded
 * by the ledger and confirmed by the runtime). Chunk and part sizes are small enough that each
 * refusal with file content happens after pack chunks were stored (or while the zip spool is a live
 * multipart upload).
 */

const KIB = 1024;
const MIB = 1024 * KIB;
/** A zip spool is completed before it is read, and R2 (local too) completes only parts of 5 MiB or more. */
const ZIP_PART_BYTES = 5 * MIB;
/** Stored first in every zip below, so that both the spool and the pack need more than one part. */
const BIG = noise(5 * MIB + 512 * KIB);

interface RefusalCase {
  name: string;
  archive: () => Uint8Array | Promise<Uint8Array>;
  limits?: Partial<IngestLimits>;
  partBytes: number;
  contentType?: string;
  /** Size of the chunks the upload arrives in. */
  chunkBytes?: number;
  status: number;
  code: string;
  message: string | RegExp;
  /** Multipart uploads as the refusal left them (`key` relative to the workspace prefix); each had parts uploaded. */
  uploads: { key: string; outcome: string }[];
  /** The refusal came after pack chunks had been stored (so the cleanup had chunks to remove). */
  packChunks?: boolean;
}

/** `n` files of `bytes` incompressible bytes each, named f0.bin, f1.bin, ... */
const files = (n: number, bytes: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}.bin`, noise(bytes, i + 1)]));

/** Where the data of the entry stored after big.bin starts (big.bin is stored, with no extra field). */
function dataAfterBig(archive: Uint8Array): number {
  const view = new DataView(archive.buffer, archive.byteOffset, archive.byteLength);
  const local = 30 + "big.bin".length + BIG.byteLength;
  return local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
}

function corruptDeflateZip(): Uint8Array {
  const archive = zip({ "big.bin": [BIG, { level: 0 }], "bad.txt": [text("hello world ".repeat(2000)), { level: 9 }] });
  const data = dataAfterBig(archive);
  for (let i = 0; i < 3; i++) archive[data + i] = archive[data + i]! ^ 0xff; // breaks the first deflate block header
  return archive;
}

function crcMismatchZip(): Uint8Array {
  const archive = zip({ "big.bin": [BIG, { level: 0 }], "b.txt": [text("hello world"), { level: 0 }] });
  const data = dataAfterBig(archive);
  expect(decode(archive.subarray(data, data + 11))).toBe("hello world");
  archive[data + 10] = "D".charCodeAt(0); // "hello worlD": same length, different CRC-32
  return archive;
}

const CASES: RefusalCase[] = [
  {
    name: "a tar with more entries than allowed",
    archive: () => tarOf(files(6, 3000)),
    limits: { maxArchiveFiles: 5 },
    partBytes: 4 * KIB,
    status: 413,
    code: "archive_too_many_files",
    message: "archive has more than 5 entries",
    uploads: [],
    packChunks: true,
  },
  {
    name: "an upload over the archive limit, arriving in chunks without a length",
    archive: () => tarOf(files(3, 5000)),
    limits: { maxArchiveBytes: 12_000 },
    partBytes: 4 * KIB,
    chunkBytes: 1024,
    status: 413,
    code: "archive_too_large",
    message: "the archive is larger than 12000 bytes",
    uploads: [],
    packChunks: true,
  },
  {
    name: "a tar whose files add up past the total limit",
    archive: () => tarOf(files(3, 5000)),
    limits: { maxTotalBytes: 12_000 },
    partBytes: 4 * KIB,
    status: 413,
    code: "archive_too_large",
    message: "the archive's files add up to more than 12000 bytes",
    uploads: [],
    packChunks: true,
  },
  {
    name: "a tar.gz whose gzip trailer (CRC-32) is corrupt",
    archive: async () => {
      const gz = gzip(await tarOf(files(3, 5000)));
      gz[gz.byteLength - 8] = gz[gz.byteLength - 8]! ^ 0xff;
      return gz;
    },
    partBytes: 4 * KIB,
    // Small chunks: the tar has reached the pack before the trailer arrives and fails.
    chunkBytes: 1024,
    status: 400,
    code: "archive_invalid",
    message: "not a valid gzip stream: Decompression failed.",
    uploads: [],
    packChunks: true,
  },
  {
    name: "a gzip bomb, by its actual ratio while inflating",
    archive: async () => gzip(await tarOf({ "a.bin": noise(2000), "zeros.bin": new Uint8Array(4 * MIB) })),
    limits: { bombCheckMinBytes: 64 * KIB, maxCompressionRatio: 20 },
    partBytes: 16 * KIB,
    status: 422,
    code: "archive_bomb",
    message: /^the gzip stream expands more than 20x \(\d+ bytes from \d+\); refusing a likely decompression bomb$/,
    uploads: [],
    packChunks: true,
  },
  {
    name: "a truncated tar",
    archive: async () => (await tarOf(files(2, 5000))).subarray(0, 512 + 5120 + 512 + 2000),
    contentType: "application/x-tar",
    partBytes: 4 * KIB,
    status: 400,
    code: "archive_invalid",
    message:
      "not a valid tar archive: Tar archive is truncated. The archive does not end with its end-of-archive blocks right after its last entry: it was cut off, or has data after its end (two tars joined, trailing bytes)",
    uploads: [],
    packChunks: true,
  },
  {
    name: "two tars joined (GNU tar reads the first; refused, with why)",
    archive: async () => {
      const [a, b] = [await tarOf({ "a.txt": "a\n" }), await tarOf({ "b.txt": "b\n" })];
      const joined = new Uint8Array(a.byteLength + b.byteLength);
      joined.set(a, 0);
      joined.set(b, a.byteLength);
      return joined;
    },
    contentType: "application/x-tar",
    partBytes: 4 * KIB,
    status: 400,
    code: "archive_invalid",
    message:
      "not a valid tar archive: Invalid EOF. The archive does not end with its end-of-archive blocks right after its last entry: it was cut off, or has data after its end (two tars joined, trailing bytes)",
    uploads: [],
    packChunks: false,
  },
  {
    name: "an unsupported format",
    archive: () => text("just some text"),
    contentType: "text/plain",
    partBytes: 4 * KIB,
    status: 415,
    code: "archive_unsupported",
    message: 'the body is not a tar, tar.gz or zip archive (Content-Type "text/plain", unrecognised magic bytes)',
    uploads: [],
  },
  {
    name: "an empty body",
    archive: () => new Uint8Array(0),
    partBytes: 4 * KIB,
    status: 400,
    code: "archive_invalid",
    message: "the archive is empty",
    uploads: [],
  },
  {
    name: "a zip over the archive limit, refused while it is spooled",
    archive: () => zip({ "big.bin": [BIG, { level: 0 }] }),
    limits: { maxArchiveBytes: 5 * MIB + 256 * KIB },
    partBytes: ZIP_PART_BYTES,
    status: 413,
    code: "archive_too_large",
    message: `the archive is larger than ${5 * MIB + 256 * KIB} bytes`,
    uploads: [{ key: "upload", outcome: "aborted" }],
  },
  {
    name: "a zip with more entries than allowed",
    archive: () =>
      zip({ "big.bin": [BIG, { level: 0 }], ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}.txt`, text("x")])) }),
    limits: { maxArchiveFiles: 5 },
    partBytes: ZIP_PART_BYTES,
    status: 413,
    code: "archive_too_many_files",
    message: "archive has more than 5 entries",
    uploads: [{ key: "upload", outcome: "completed" }],
  },
  {
    name: "a zip whose deflate stream is corrupt",
    archive: corruptDeflateZip,
    partBytes: ZIP_PART_BYTES,
    status: 400,
    code: "archive_invalid",
    message: "zip entry 'bad.txt' is corrupt: Decompression failed.",
    uploads: [{ key: "upload", outcome: "completed" }],
    packChunks: true,
  },
  {
    name: "a zip bomb, by its declared ratio",
    archive: () => zip({ "big.bin": [BIG, { level: 0 }], "zeros.bin": new Uint8Array(2 * MIB) }),
    limits: { bombCheckMinBytes: 256 * KIB, maxCompressionRatio: 50 },
    partBytes: ZIP_PART_BYTES,
    status: 422,
    code: "archive_bomb",
    message: /^zip entry 'zeros\.bin' declares 2097152 bytes from \d+ \(over 50x\); refusing a likely decompression bomb$/,
    uploads: [{ key: "upload", outcome: "completed" }],
  },
  {
    name: "a zip entry whose data does not match its CRC-32",
    archive: crcMismatchZip,
    partBytes: ZIP_PART_BYTES,
    status: 400,
    code: "archive_invalid",
    message: "zip entry 'b.txt' fails its CRC-32 check (content 0x3624314d, archive says 0x0d4a1185)",
    uploads: [{ key: "upload", outcome: "completed" }],
    packChunks: true,
  },
];

let counter = 0;

describe("ingestWorkspace: every refusal leaves nothing behind", () => {
  it.each(CASES)("$name: $status $code", async (c) => {
    const workspaceId = `w_refused${++counter}`;
    const prefix = `workspaces/${workspaceId}/`;
    const before = await keysUnder(env.STORE, "workspaces/");
    const ledger = multipartLedger();
    const error = await ingestWorkspace(ledger.bucket, streamOf(await c.archive(), c.chunkBytes), {
      workspaceId,
      owner: "alice",
      contentType: c.contentType,
      limits: c.limits,
      partBytes: c.partBytes,
    }).then(
      () => null,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(ArchiveError);
    const { code, message } = error as ArchiveError;
    expect({ status: httpStatus(code), code }).toEqual({ status: c.status, code: c.code });
    if (c.message instanceof RegExp) expect(message).toMatch(c.message);
    else expect(message).toBe(c.message);
    expect(await keysUnder(env.STORE, prefix)).toEqual([]);
    expect(await keysUnder(env.STORE, "workspaces/")).toEqual(before);
    expect(ledger.uploads.map(({ key, outcome }) => ({ key: key.slice(prefix.length), outcome }))).toEqual(c.uploads);
    // The refusal came while these uploads held parts: the cleanup had real parts to remove.
    expect(ledger.uploads.filter((u) => u.parts === 0)).toEqual([]);
    expect(ledger.puts.some((key) => key.startsWith(`${prefix}pack/`))).toBe(c.packChunks ?? false);
    expect(await ledger.stillOpen()).toEqual([]);
  });
});
