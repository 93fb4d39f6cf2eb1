import type { TarHeader } from "modern-tar";
import { archiveInvalid } from "./archive-errors";
import { concatBytes } from "./streams";

/** A name or link target as its bytes say, and the string modern-tar made of them. */
export interface RawText {
  bytes: Uint8Array;
  decoded: string;
}

/** What modern-tar's header leaves out of one member. */
export interface RawMember {
  /** The type flag byte: modern-tar reads a type it does not know ('V', 'S', ...) as a file. */
  typeflag: number;
  name: RawText;
  linkname: RawText;
}

/** What PAX records and GNU long names say about the members after them (the last one wins). */
interface Overrides {
  name?: RawText;
  linkname?: RawText;
  size?: number;
  /** Set by a PAX header: the next extended header replaces, rather than adds to, these. */
  pax?: boolean;
}

const BLOCK_BYTES = 512;
/** modern-tar's own limit for the data of a PAX header or GNU long name. */
const MAX_META_BYTES = 8 * 1024 * 1024;
const [PAX, PAX_GLOBAL, LONG_NAME, LONG_LINK] = ["x", "g", "L", "K"].map((c) => c.charCodeAt(0));
/** Link, symlink, devices, directory, FIFO: modern-tar reads no data after these, whatever their size says. */
const BODYLESS_TYPES = new Set([..."123456"].map((c) => c.charCodeAt(0)));
const EMPTY = new Uint8Array(0);
const SLASH = new Uint8Array([0x2f]);
/** How modern-tar decodes every header string: a leading U+FEFF dropped, bytes that are not UTF-8 as U+FFFD. */
const modernTarUtf8 = new TextDecoder();

/**
 * Follows the block structure of the tar stream on its way to modern-tar and keeps the raw header of
 * every member, which modern-tar's header does not give exactly: its names drop a leading U+FEFF and
 * turn bytes that are not UTF-8 into U+FFFD (as does a real U+FFFD), and its type folds every flag it
 * does not know into "file". It reads sizes, PAX records and GNU long names as modern-tar does, and
 * `take` checks that both saw the same header.
 */
export class RawTarHeaders {
  private readonly members: RawMember[] = [];
  private readonly block = new Uint8Array(BLOCK_BYTES);
  private blockFill = 0;
  /** Bytes of data and padding still to pass before the next header. */
  private skipBytes = 0;
  private meta: { typeflag: number; data: Uint8Array; fill: number } | null = null;
  private pending: Overrides = {};
  private readonly globals: Overrides = {};
  /** A zero block: the end of the archive (modern-tar checks what follows). */
  private ended = false;

  /** Passes the tar stream on unchanged, reading its headers on the way. */
  tap(): TransformStream<Uint8Array, Uint8Array> {
    return new TransformStream({
      transform: (chunk, controller) => {
        this.scan(chunk);
        controller.enqueue(chunk);
      },
    });
  }

  /** The raw header of the member modern-tar decoded as `header` (both in archive order). */
  take(header: TarHeader): RawMember {
    const member = this.members.shift();
    if (!member || member.name.decoded !== header.name) throw archiveInvalid(`the tar header of '${header.name}' could not be read`);
    return member;
  }

  private scan(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.byteLength && !this.ended) {
      if (this.skipBytes > 0) {
        const n = Math.min(this.skipBytes, chunk.byteLength - at);
        this.skipBytes -= n;
        at += n;
      } else if (this.meta) {
        const meta = this.meta;
        const n = Math.min(meta.data.byteLength - meta.fill, chunk.byteLength - at);
        meta.data.set(chunk.subarray(at, at + n), meta.fill);
        meta.fill += n;
        at += n;
        if (meta.fill === meta.data.byteLength) {
          this.meta = null;
          this.skipBytes = padding(meta.data.byteLength);
          this.applyMeta(meta.typeflag, meta.data);
        }
      } else {
        const n = Math.min(BLOCK_BYTES - this.blockFill, chunk.byteLength - at);
        this.block.set(chunk.subarray(at, at + n), this.blockFill);
        this.blockFill += n;
        at += n;
        if (this.blockFill === BLOCK_BYTES) {
          this.blockFill = 0;
          // A copy: the member keeps views of its name fields, and the next header reuses the buffer.
          this.readHeader(this.block.slice());
        }
      }
    }
  }

  private readHeader(block: Uint8Array): void {
    if (block.every((b) => b === 0)) {
      this.ended = true;
      return;
    }
    const typeflag = block[156]!;
    const size = readNumber(block, 124, 12);
    if (typeflag === PAX || typeflag === PAX_GLOBAL || typeflag === LONG_NAME || typeflag === LONG_LINK) {
      if (size > MAX_META_BYTES) throw new Error("Tar metadata entry exceeds maximum size.");
      if (size === 0) this.applyMeta(typeflag, EMPTY);
      else this.meta = { typeflag, data: new Uint8Array(size), fill: 0 };
      return;
    }
    const { pending, globals } = this;
    this.pending = {};
    this.members.push({
      typeflag,
      name: pending.name ?? globals.name ?? ustarName(block),
      linkname: pending.linkname ?? globals.linkname ?? rawText(cString(block, 157, 100)),
    });
    const dataBytes = BODYLESS_TYPES.has(typeflag) ? 0 : (pending.size ?? globals.size ?? size);
    this.skipBytes = dataBytes + padding(dataBytes);
  }

  private applyMeta(typeflag: number, data: Uint8Array): void {
    const overrides: Overrides =
      typeflag === LONG_NAME
        ? { name: rawText(cString(data, 0, data.byteLength)) }
        : typeflag === LONG_LINK
          ? { linkname: rawText(cString(data, 0, data.byteLength)) }
          : paxOverrides(data);
    if (this.pending.pax) this.pending = {};
    Object.assign(typeflag === PAX_GLOBAL ? this.globals : this.pending, overrides);
  }
}

const padding = (bytes: number) => -bytes & (BLOCK_BYTES - 1);
const rawText = (bytes: Uint8Array): RawText => ({ bytes, decoded: modernTarUtf8.decode(bytes) });

/** A NUL-terminated header field. */
function cString(bytes: Uint8Array, offset: number, size: number): Uint8Array {
  const field = bytes.subarray(offset, offset + size);
  const end = field.indexOf(0);
  return end < 0 ? field : field.subarray(0, end);
}

/** The name field, after the prefix field when the magic is POSIX ustar (modern-tar ignores it in GNU headers). */
function ustarName(block: Uint8Array): RawText {
  const name = cString(block, 0, 100);
  const posix = modernTarUtf8.decode(cString(block, 257, 6)) === "ustar";
  const prefix = posix ? cString(block, 345, 155) : EMPTY;
  const shownPrefix = modernTarUtf8.decode(prefix);
  return {
    bytes: prefix.byteLength > 0 ? concatBytes([prefix, SLASH, name]) : name,
    // A prefix that decodes to "" (only a U+FEFF) is left out by modern-tar.
    decoded: shownPrefix ? `${shownPrefix}/${modernTarUtf8.decode(name)}` : modernTarUtf8.decode(name),
  };
}

/** A numeric header field: octal digits (spaces skipped, NUL ends it), or base-256 when the high bit is set. */
function readNumber(bytes: Uint8Array, offset: number, size: number): number {
  if (bytes[offset]! & 0x80) {
    let value = bytes[offset]! & 0x7f;
    for (let i = 1; i < size; i++) value = value * 256 + bytes[offset + i]!;
    if (!Number.isSafeInteger(value)) throw new Error("TAR number too large");
    return value;
  }
  let value = 0;
  for (let i = offset; i < offset + size; i++) {
    const c = bytes[i]!;
    if (c === 0) break;
    if (c === 0x20) continue;
    if (c < 0x30 || c > 0x37) throw new Error("Invalid tar number.");
    value = value * 8 + (c - 0x30);
  }
  return value;
}

/** The records of a PAX header that change a member's name, link target or data size ("<length> <key>=<value>\n"). */
function paxOverrides(data: Uint8Array): Overrides {
  const overrides: Overrides = {};
  let at = 0;
  while (at < data.byteLength) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number.parseInt(modernTarUtf8.decode(data.subarray(at, space)), 10);
    if (!(length > 0)) break;
    const record = data.subarray(space + 1, at + length - 1);
    const text = modernTarUtf8.decode(record);
    const equals = text.indexOf("=");
    if (equals > 0) {
      overrides.pax = true;
      const key = text.slice(0, equals);
      const value = { bytes: record.subarray(record.indexOf(0x3d) + 1), decoded: text.slice(equals + 1) };
      if (key === "path") overrides.name = value;
      else if (key === "linkpath") overrides.linkname = value;
      else if (key === "size" && /^\d+$/.test(value.decoded) && Number.isSafeInteger(+value.decoded)) overrides.size = +value.decoded;
    }
    at += length;
  }
  return overrides;
}
