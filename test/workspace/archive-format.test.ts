import { describe, expect, it } from "vitest";
import { httpStatus } from "../../src/domain";
import { ArchiveError } from "../../src/workspace/archive-errors";
import { detectArchiveFormat } from "../../src/workspace/archive-format";
import { gzip, rawTarEntry, tarOf, text, zip } from "./archives";

describe("detectArchiveFormat", () => {
  it("recognises magic bytes whatever the Content-Type says", async () => {
    const tar = await tarOf({ "a.txt": "a" });
    expect(detectArchiveFormat(undefined, tar)).toBe("tar");
    expect(detectArchiveFormat("application/octet-stream", gzip(tar))).toBe("tar.gz");
    expect(detectArchiveFormat("application/x-tar", zip({ "a.txt": text("a") }))).toBe("zip");
    expect(detectArchiveFormat(undefined, zip({}))).toBe("zip");
    expect(detectArchiveFormat(undefined, new Uint8Array(1024))).toBe("tar");
  });

  it("falls back to the Content-Type (parameters and case ignored) for a tar without ustar magic", () => {
    const v7 = rawTarEntry("a.txt", "0", text("a"));
    v7.fill(0, 257, 265);
    expect(detectArchiveFormat("Application/X-Tar; charset=binary", v7)).toBe("tar");
    expect(detectArchiveFormat("application/zip", v7)).toBe("zip");
    expect(detectArchiveFormat("application/gzip", v7)).toBe("tar.gz");
  });

  it("refuses anything else with 415 archive_unsupported", () => {
    const error = (() => {
      try {
        detectArchiveFormat("application/json", text('{"a":1}'));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ArchiveError);
    expect(httpStatus((error as ArchiveError).code)).toBe(415);
    expect(error).toMatchObject({
      code: "archive_unsupported",
      message: 'the body is not a tar, tar.gz or zip archive (Content-Type "application/json", unrecognised magic bytes)',
    });
  });
});
