import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_SESSION_CHANGE_VERSIONS, MAX_WORKSPACE_PATH_CHARS } from "../../src/domain/limits";
import { WorkspaceError } from "../../src/workspace/errors";
import { OVERLAY_CHUNK_BYTES, SqliteOverlay } from "../../src/workspace/overlay";
import { text } from "./archives";

/** Runs `fn` with a real Durable Object SqlStorage (a fresh object per name). */
function withSql<T>(name: string, fn: (sql: SqlStorage, storage: DurableObjectStorage) => T | Promise<T>): Promise<T> {
  return runInDurableObject(env.SESSIONS.getByName(name), (_instance, state) => fn(state.storage.sql, state.storage));
}

/** What `change` threw, or null. */
function refusal(change: () => void): unknown {
  try {
    change();
    return null;
  } catch (e) {
    return e;
  }
}

async function sha256(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("SqliteOverlay", () => {
  it("records content and whiteouts, sorted by path, and replaces earlier changes", () =>
    withSql("overlay-1", (sql) => {
      const overlay = new SqliteOverlay(sql);
      overlay.put("b.txt", text("bee"), 0o644);
      overlay.put("a/x.sh", text("#!"), 0o755);
      overlay.whiteout("c.txt");
      overlay.put("c.txt", text("back"), 0o644);
      overlay.whiteout("b.txt");
      expect(overlay.list()).toEqual([
        { path: "a/x.sh", deleted: false, size: 2, mode: 0o755 },
        { path: "b.txt", deleted: true, size: 0, mode: 0 },
        { path: "c.txt", deleted: false, size: 4, mode: 0o644 },
      ]);
      expect(overlay.get("c.txt")).toEqual(text("back"));
      expect(overlay.get("b.txt")).toBeNull();
      expect(overlay.get("never")).toBeNull();
      expect(overlay.entry("a/x.sh")).toEqual({ path: "a/x.sh", deleted: false, size: 2, mode: 0o755 });
      expect(overlay.entry("never")).toBeNull();
    }));

  it("keeps its table across instances (CREATE TABLE IF NOT EXISTS) and stores empty files", () =>
    withSql("overlay-2", (sql) => {
      new SqliteOverlay(sql).put("empty", new Uint8Array(0), 0o644);
      const again = new SqliteOverlay(sql);
      expect(again.list()).toEqual([{ path: "empty", deleted: false, size: 0, mode: 0o644 }]);
      expect(again.get("empty")).toEqual(new Uint8Array(0));
    }));

  it("splits large content across rows no bigger than OVERLAY_CHUNK_BYTES and reassembles it exactly", () =>
    withSql("overlay-3", async (sql) => {
      const overlay = new SqliteOverlay(sql);
      const big = new Uint8Array(OVERLAY_CHUNK_BYTES * 2 + 123);
      for (let i = 0; i < big.byteLength; i++) big[i] = (i * 7) % 251;
      overlay.put("big.bin", big, 0o644);
      const rows = sql
        .exec<{ chunk: number; bytes: number }>("SELECT chunk, length(data) AS bytes FROM overlay WHERE path = 'big.bin' ORDER BY chunk")
        .toArray();
      expect(rows).toEqual([
        { chunk: 0, bytes: OVERLAY_CHUNK_BYTES },
        { chunk: 1, bytes: OVERLAY_CHUNK_BYTES },
        { chunk: 2, bytes: 123 },
      ]);
      // Compare digests: a deep equality over 2 MB element by element takes seconds.
      expect(await sha256(overlay.get("big.bin")!)).toBe(await sha256(big));
      // Rewriting with less content drops the old chunks.
      overlay.put("big.bin", text("small"), 0o644);
      expect(sql.exec("SELECT count(*) AS n FROM overlay WHERE path = 'big.bin'").one()).toEqual({ n: 1 });
    }));

  it("streams content a row per pull, and breaks the stream off when the path changes meanwhile (hunt 84)", () =>
    withSql("overlay-stream", async (sql) => {
      const overlay = new SqliteOverlay(sql);
      const big = new Uint8Array(OVERLAY_CHUNK_BYTES * 2 + 123);
      for (let i = 0; i < big.byteLength; i++) big[i] = (i * 7) % 251;
      overlay.put("big.bin", big, 0o644);
      overlay.put("empty", new Uint8Array(0), 0o644);
      overlay.whiteout("gone.txt");
      expect([overlay.stream("gone.txt"), overlay.stream("never")]).toEqual([null, null]);
      const read = async (body: ReadableStream<Uint8Array>) => {
        const parts: number[] = [];
        const reader = body.getReader();
        for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(next.value.byteLength);
        return parts;
      };
      const streamed = overlay.stream("big.bin")!;
      expect(streamed.size).toBe(big.byteLength);
      const [a, b] = streamed.body.tee();
      expect(await read(a)).toEqual([OVERLAY_CHUNK_BYTES, OVERLAY_CHUNK_BYTES, 123]);
      expect(await sha256(new Uint8Array(await new Response(b).arrayBuffer()))).toBe(await sha256(big));
      const empty = overlay.stream("empty")!;
      expect([empty.size, await read(empty.body)]).toEqual([0, []]);
      // A write of the path between two pulls: the first row was of the old content, so the rest is refused.
      const changing = overlay.stream("big.bin")!.body.getReader();
      expect((await changing.read()).value?.byteLength).toBe(OVERLAY_CHUNK_BYTES);
      overlay.put("big.bin", big, 0o644);
      await expect(changing.read()).rejects.toThrow("'big.bin' was changed while it was read");
    }));

  it("refuses files over its limit with file_too_large and stores nothing", () =>
    withSql("overlay-4", (sql) => {
      const overlay = new SqliteOverlay(sql, { maxFileBytes: 1000 });
      const error = (() => {
        try {
          overlay.put("huge.bin", new Uint8Array(1001), 0o644);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(WorkspaceError);
      expect(error).toMatchObject({ code: "file_too_large", message: "'huge.bin' is 1001 bytes; the limit for written files is 1000" });
      expect(overlay.list()).toEqual([]);
    }));

  it("refuses a write or a deletion that would pass the versions a session may hold, replaced ones and deletions counted", () =>
    withSql("overlay-versions", (sql) => {
      let seq = 0;
      const overlay = new SqliteOverlay(sql, { maxVersions: 4, stamp: () => ++seq }); // every change a step of its own
      overlay.put("a.txt", new Uint8Array(1), 0o644);
      overlay.put("a.txt", new Uint8Array(2), 0o644);
      overlay.whiteout("a.txt");
      overlay.put("b.txt", new Uint8Array(1), 0o644);
      expect(overlay.storedVersions()).toBe(4);
      expect(refusal(() => overlay.put("c.txt", new Uint8Array(1), 0o644))).toMatchObject({
        code: "workspace_full",
        message:
          "writing 'c.txt' would pass the 4 file versions this session's workspace changes may hold (replaced versions and deletions included)",
      });
      expect(refusal(() => overlay.whiteout("b.txt"))).toMatchObject({
        code: "workspace_full",
        message:
          "deleting 'b.txt' would pass the 4 file versions this session's workspace changes may hold (replaced versions and deletions included)",
      });
      expect([overlay.entry("c.txt"), overlay.entry("b.txt")?.deleted]).toEqual([null, false]);
      // A new instance over the same tables (the object restarted) counts what is stored.
      expect(new SqliteOverlay(sql, { maxVersions: 4 }).storedVersions()).toBe(4);
      expect(MAX_SESSION_CHANGE_VERSIONS).toBe(100_000);
    }));

  it("refuses a write or a deletion that would pass the characters of paths a session may hold, every version counted", () =>
    withSql("overlay-path-chars", (sql) => {
      let seq = 0;
      const overlay = new SqliteOverlay(sql, { maxPathChars: 12, stamp: () => ++seq });
      overlay.put("abcd", new Uint8Array(1), 0o644);
      overlay.put("abcd", new Uint8Array(2), 0o644); // the replaced version keeps its path
      overlay.put("\u{1F600}b", new Uint8Array(1), 0o644); // two characters, as SQLite counts them
      expect(overlay.storedPathChars()).toBe(10);
      expect(refusal(() => overlay.whiteout("abc"))).toMatchObject({
        code: "workspace_full",
        message:
          "deleting 'abc' would pass the 12 characters of paths this session's workspace changes may hold (10 held, replaced versions and deletions included)",
      });
      overlay.whiteout("ab");
      expect(refusal(() => overlay.put("c", new Uint8Array(1), 0o644))).toMatchObject({
        code: "workspace_full",
        message:
          "writing 'c' would pass the 12 characters of paths this session's workspace changes may hold (12 held, replaced versions and deletions included)",
      });
      expect([overlay.entry("c"), overlay.entry("abc"), overlay.entry("ab")?.deleted]).toEqual([null, null, true]);
      // A new instance over the same tables (the object restarted) counts what is stored, the same way.
      expect(new SqliteOverlay(sql, { maxPathChars: 12 }).storedPathChars()).toBe(12);
      expect(MAX_WORKSPACE_PATH_CHARS).toBe(8 * 1024 * 1024);
    }));

  it("refuses a write that would pass the bytes a session may hold, replaced versions counted, with workspace_full", () =>
    withSql("overlay-budget", (sql) => {
      let seq = 0;
      const overlay = new SqliteOverlay(sql, { maxStoredBytes: 100, stamp: () => ++seq });
      const write = (path: string, size: number) => refusal(() => overlay.put(path, new Uint8Array(size), 0o644));
      expect(write("a.bin", 60)).toBeNull();
      // Rewriting keeps the old version (a fork at an earlier message needs it): 60 + 30 held.
      expect(write("a.bin", 30)).toBeNull();
      overlay.whiteout("a.bin");
      expect(overlay.storedBytes()).toBe(90);
      const error = write("b.bin", 11);
      expect(error).toBeInstanceOf(WorkspaceError);
      expect(error).toMatchObject({
        code: "workspace_full",
        message:
          "writing 'b.bin' (11 bytes) would pass the 100 bytes this session's workspace changes may hold (90 held, replaced versions included)",
      });
      expect(overlay.entry("b.bin")).toBeNull();
      expect(write("b.bin", 10)).toBeNull();
      // A new instance over the same tables (the object restarted) counts what is stored.
      expect(new SqliteOverlay(sql, { maxStoredBytes: 100 }).storedBytes()).toBe(100);
    }));

  it("runs each change through the given transaction function", () =>
    withSql("overlay-5", (sql, storage) => {
      let transactions = 0;
      const overlay = new SqliteOverlay(sql, {
        transaction: (fn) => {
          transactions++;
          return storage.transactionSync(fn);
        },
      });
      overlay.put("a", text("1"), 0o644);
      overlay.whiteout("b");
      expect(transactions).toBe(2);
      expect(overlay.list().map((e) => e.path)).toEqual(["a", "b"]);
    }));
});

describe("SqliteOverlay history (the workspace at a message)", () => {
  it("keeps replaced versions with their stamps; versionRefsUpTo(n) replays to the overlay as it was at n", async () => {
    await withSql("overlay-history", (sql) => {
      let seq = 1;
      const overlay = new SqliteOverlay(sql, { stamp: () => seq });
      overlay.put("a.txt", text("v1"), 0o644);
      seq = 3;
      overlay.put("a.txt", text("v2"), 0o644);
      overlay.put("b.txt", text("b"), 0o755);
      seq = 5;
      overlay.whiteout("a.txt");
      const at = (n: number) =>
        overlay
          .versionRefsUpTo(n)
          .map((v) => [v.path, v.deleted ? "deleted" : new TextDecoder().decode(overlay.versionBytes(v)!), v.stamp, v.version]);
      expect(at(0)).toEqual([]);
      expect(at(2)).toEqual([["a.txt", "v1", 1, 1]]);
      expect(at(4)).toEqual([
        ["a.txt", "v1", 1, 1],
        ["a.txt", "v2", 3, 2],
        ["b.txt", "b", 3, null],
      ]);
      expect(at(5).at(-1)).toEqual(["a.txt", "deleted", 5, null]);
      // The current view is unchanged by the history.
      expect(overlay.entry("a.txt")).toMatchObject({ deleted: true });
      expect(new TextDecoder().decode(overlay.get("b.txt")!)).toBe("b");
    });
  });

  it("drops a change replaced at its own stamp (no message between them): one version for a shell's truncate-then-write", async () => {
    await withSql("overlay-same-stamp", (sql) => {
      let seq = 1;
      const overlay = new SqliteOverlay(sql, { stamp: () => seq, maxVersions: 3, maxStoredBytes: 12 });
      overlay.put("a.txt", text("v1"), 0o644);
      seq = 2;
      overlay.put("a.txt", new Uint8Array(0), 0o644); // `> a.txt` opens it empty...
      overlay.put("a.txt", text("v2"), 0o644); // ...then writes
      overlay.put("b.txt", text("bbbb"), 0o644);
      overlay.whiteout("b.txt"); // a deletion in the same step replaces the write
      overlay.put("b.txt", text("bb"), 0o644);
      expect([overlay.storedVersions(), overlay.storedBytes(), overlay.storedPathChars()]).toEqual([3, 6, 15]);
      // At the limits, a change that replaces one of its own step still fits: it adds no version and frees the bytes it replaces.
      overlay.put("a.txt", text("12345678"), 0o644);
      expect(overlay.storedBytes()).toBe(12);
      expect(refusal(() => overlay.put("c.txt", new Uint8Array(0), 0o644))).toMatchObject({ code: "workspace_full" });
      expect(refusal(() => overlay.put("a.txt", text("123456789"), 0o644))).toMatchObject({
        code: "workspace_full",
        message:
          "writing 'a.txt' (9 bytes) would pass the 12 bytes this session's workspace changes may hold (12 held, replaced versions included)",
      });
      expect(
        overlay
          .versionRefsUpTo(2)
          .map((v) => [v.path, v.deleted ? "deleted" : new TextDecoder().decode(overlay.versionBytes(v)!), v.stamp]),
      ).toEqual([
        ["a.txt", "v1", 1],
        ["a.txt", "12345678", 2],
        ["b.txt", "bb", 2],
      ]);
      // A new instance over the same tables counts what is stored, the same way.
      const again = new SqliteOverlay(sql);
      expect([again.storedVersions(), again.storedBytes(), again.storedPathChars()]).toEqual([3, 12, 15]);
    });
  });

  it("reads a listed change's bytes after it was replaced, from the history; null once they are gone", async () => {
    await withSql("overlay-version-bytes", (sql) => {
      let seq = 7;
      const overlay = new SqliteOverlay(sql, { stamp: () => seq });
      const big = new Uint8Array(OVERLAY_CHUNK_BYTES * 2 + 5).map((_, i) => i % 251);
      overlay.put("big.bin", big, 0o644);
      overlay.put("c.txt", text("first"), 0o644);
      const [bigRef, cRef] = overlay.versionRefsUpTo(7);
      expect([bigRef, cRef].map((r) => [r!.path, r!.size, r!.version])).toEqual([
        ["big.bin", big.byteLength, null],
        ["c.txt", 5, null],
      ]);
      expect(overlay.versionBytes(bigRef!)).toEqual(big);
      // Replaced at a later stamp after the listing: the listed bytes are read from the history.
      seq = 8;
      overlay.put("c.txt", text("second!"), 0o644);
      expect(new TextDecoder().decode(overlay.versionBytes(cRef!)!)).toBe("first");
      expect(overlay.versionBytes({ ...cRef!, path: "gone.txt" })).toBeNull();
      expect(overlay.versionBytes({ ...cRef!, size: 4 })).toBeNull();
      // Replaced at its own stamp: dropped, not kept, so a fork that listed it is told to fork again.
      seq = 7;
      overlay.put("big.bin", text("smaller"), 0o644);
      expect(overlay.versionBytes(bigRef!)).toBeNull();
    });
  });

  it("applies one attempt's staged changes in order as put and whiteout would, stamped by key; other attempts' parts are dropped", async () => {
    await withSql("overlay-staged", (sql) => {
      const overlay = new SqliteOverlay(sql, { stamp: () => 99 });
      overlay.put("old.txt", text("before the fork"), 0o644);
      const big = new Uint8Array(OVERLAY_CHUNK_BYTES + 10).fill(7);
      const change = (path: string, body: string | Uint8Array | null, stampKey: string | null, mode = 0o644) => ({
        path,
        deleted: body === null,
        mode: body === null ? 0 : mode,
        bytes: body === null ? new Uint8Array(0) : typeof body === "string" ? text(body) : body,
        stampKey,
      });
      // Another attempt of the same fork, staging at the same time (and never finishing).
      overlay.stage("other", 0, [change("stale.txt", "from an attempt that failed", "m1"), change("a.txt", "other's", "m1")]);
      overlay.stage("mine", 0, [change("a.txt", "v1", null), change("big.bin", big, "m1", 0o755)]);
      expect(overlay.stagedComplete("mine", 4)).toBe(false);
      overlay.stage("mine", 2, [change("a.txt", "v2", "m2"), change("a.txt", null, "m3")]);
      expect([overlay.stagedComplete("mine", 4), overlay.stagedComplete("mine", 3), overlay.stagedComplete("other", 2)]).toEqual([
        true,
        false,
        true,
      ]);
      const stamps: Record<string, number> = { m1: 10, m2: 20, m3: 30 };
      overlay.applyStaged("mine", (key) => (key === null ? 0 : stamps[key]!));
      expect(overlay.stagedComplete("other", 0)).toBe(true);
      expect(sql.exec("SELECT COUNT(*) AS n FROM overlay_staged").one().n).toBe(0);
      expect(overlay.list()).toEqual([
        { path: "a.txt", deleted: true, size: 0, mode: 0 },
        { path: "big.bin", deleted: false, size: big.byteLength, mode: 0o755 },
        { path: "old.txt", deleted: false, size: 15, mode: 0o644 },
      ]);
      expect(overlay.get("big.bin")).toEqual(big);
      expect(overlay.get("stale.txt")).toBeNull();
      const at = (n: number) =>
        overlay
          .versionRefsUpTo(n)
          .map((v) => [v.path, v.deleted ? "deleted" : new TextDecoder().decode(overlay.versionBytes(v)!).slice(0, 2), v.stamp]);
      expect(at(30)).toEqual([
        ["a.txt", "v1", 0],
        ["big.bin", "\x07\x07", 10],
        ["a.txt", "v2", 20],
        ["a.txt", "deleted", 30],
      ]);
    });
  });
});
