import { archiveBomb, archiveTooLarge } from "./archive-errors";
import type { IngestLimits } from "./limits";
import { pipeThroughOnDemand, pipeThroughQuietly } from "./streams";

/** Limits on what one decompression may produce. */
export interface ExpansionLimits {
  /** Refuse with `archive_too_large` past this many output bytes. */
  maxOutputBytes: number;
  maxCompressionRatio: number;
  bombCheckMinBytes: number;
  /** What is being decompressed, for messages ("the gzip stream", "zip entry 'a.bin'"). */
  label: string;
}

export function expansionLimits(limits: IngestLimits, label: string, maxOutputBytes = limits.maxExpandedBytes): ExpansionLimits {
  return { maxOutputBytes, maxCompressionRatio: limits.maxCompressionRatio, bombCheckMinBytes: limits.bombCheckMinBytes, label };
}

/**
 * Pipes `compressed` through `decompressor`, counting bytes on both sides, and errors the output as
 * soon as it passes `maxOutputBytes` or the output/input ratio passes `maxCompressionRatio`, so a
 * bomb is stopped after about `bombCheckMinBytes` of output instead of being inflated whole.
 */
export function guardExpansion(
  compressed: ReadableStream<Uint8Array>,
  decompressor: ReadableWritablePair<Uint8Array, Uint8Array>,
  limits: ExpansionLimits,
): ReadableStream<Uint8Array> {
  let inBytes = 0;
  let outBytes = 0;
  const countIn = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      inBytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  const checkOut = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      outBytes += chunk.byteLength;
      if (outBytes > limits.maxOutputBytes) {
        throw archiveTooLarge(`${limits.label} expands to more than ${limits.maxOutputBytes} bytes`);
      }
      if (outBytes >= limits.bombCheckMinBytes && outBytes > inBytes * limits.maxCompressionRatio) {
        throw archiveBomb(
          `${limits.label} expands more than ${limits.maxCompressionRatio}x (${outBytes} bytes from ${inBytes}); refusing a likely decompression bomb`,
        );
      }
      controller.enqueue(chunk);
    },
  });
  const counted = pipeThroughQuietly(compressed, countIn);
  // On demand: native decompressors queue all of their output otherwise (see pipeThroughOnDemand).
  return pipeThroughQuietly(pipeThroughOnDemand(counted, decompressor), checkOut);
}
