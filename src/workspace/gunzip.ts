/** The most zero bytes after the gzip data taken as padding (tape blocks are at most a few hundred KiB). */
const MAX_PADDING_BYTES = 1024 * 1024;

/**
 * A gzip decompressor (workerd's native `DecompressionStream`) that takes zero bytes after the gzip
 * data as padding, as GNU tar does (tools that write to tape-sized blocks pad with zeros). The native
 * stream refuses any byte after the member ("Trailing bytes after end of compressed data") and drops
 * the output of the chunk that held them, so the tar's last blocks never arrived: here the zeros at
 * the end of the input are held back and written as a chunk of their own, after everything else, and
 * that refusal, for that chunk, ends the output normally. A second gzip member (bytes that are not
 * zeros) is still refused.
 */
export function paddedGunzip(): ReadableWritablePair<Uint8Array, Uint8Array> {
  const native = new DecompressionStream("gzip");
  let paddingWritten = false;
  // The zeros that end the input so far (only a count: they are all zeros), at most MAX_PADDING_BYTES.
  let held = 0;
  // A sink that writes straight through to the native stream, so a write settles when the native
  // stream took it in, as the on-demand pump (pipeThroughOnDemand) expects.
  const input = native.writable.getWriter();
  const writable = new WritableStream<Uint8Array>({
    async write(chunk) {
      const end = zerosFrom(chunk);
      if (end > 0) {
        if (held > 0) await input.write(new Uint8Array(held));
        held = 0;
        await input.write(chunk.subarray(0, end));
      }
      held += chunk.byteLength - end;
      // A longer run is data (a stored block of zeros) or padding past what this takes.
      if (held > MAX_PADDING_BYTES) {
        await input.write(new Uint8Array(held - MAX_PADDING_BYTES));
        held = MAX_PADDING_BYTES;
      }
    },
    async close() {
      if (held > 0) {
        paddingWritten = true;
        await input.write(new Uint8Array(held)).catch(() => {});
      }
      await input.close().catch(() => {});
    },
    abort(reason) {
      return input.abort(reason);
    },
  });
  const output = native.readable.getReader();
  const readable = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await output.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          if (paddingWritten && String((error as Error)?.message).includes("Trailing bytes")) controller.close();
          else controller.error(error);
        }
      },
      cancel(reason) {
        return output.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return { writable, readable };
}

/** Where the run of zero bytes that ends `bytes` starts (`bytes.byteLength` when it ends otherwise). */
function zerosFrom(bytes: Uint8Array): number {
  let at = bytes.byteLength;
  while (at > 0 && bytes[at - 1] === 0) at--;
  return at;
}
