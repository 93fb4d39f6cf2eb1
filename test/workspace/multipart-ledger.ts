import { env } from "cloudflare:workers";

/** One multipart upload as the code under test left it. */
export interface RecordedUpload {
  key: string;
  uploadId: string;
  /** Parts R2 accepted. */
  parts: number;
  /** The first of complete() or abort() that succeeded; "open" if neither did. */
  outcome: "open" | "completed" | "aborted";
}

export interface LedgerOptions {
  /** createMultipartUpload waits at this hold before it calls R2, so a test can run abort() meanwhile. */
  holdCreate?: Hold;
  /** put waits at this hold before it calls R2. */
  holdPut?: Hold;
}

/**
 * The test bucket with every multipart upload and every put recorded (created or resumed, parts, completed or
 * aborted). The local runtime cannot list multipart uploads, so this is how a test sees one left
 * open; `stillOpen()` then asks the runtime itself.
 */
export function multipartLedger(bucket: R2Bucket = env.STORE, options: LedgerOptions = {}) {
  const uploads: RecordedUpload[] = [];
  /** Keys of the single-piece puts R2 accepted, in order. */
  const puts: string[] = [];
  const track = (upload: R2MultipartUpload): R2MultipartUpload => {
    const record: RecordedUpload = { key: upload.key, uploadId: upload.uploadId, parts: 0, outcome: "open" };
    uploads.push(record);
    const finish = (outcome: "completed" | "aborted") => {
      if (record.outcome === "open") record.outcome = outcome;
    };
    return {
      key: upload.key,
      uploadId: upload.uploadId,
      uploadPart: async (partNumber, value, partOptions) => {
        const part = await upload.uploadPart(partNumber, value, partOptions);
        record.parts++;
        return part;
      },
      complete: async (parts) => {
        const object = await upload.complete(parts);
        finish("completed");
        return object;
      },
      abort: async () => {
        await upload.abort();
        finish("aborted");
      },
    };
  };
  const proxy = new Proxy(bucket, {
    get(target, property) {
      if (property === "createMultipartUpload") {
        return async (key: string, createOptions?: R2MultipartOptions) => {
          await options.holdCreate?.wait();
          return track(await target.createMultipartUpload(key, createOptions));
        };
      }
      if (property === "resumeMultipartUpload")
        return (key: string, uploadId: string) => track(target.resumeMultipartUpload(key, uploadId));
      if (property === "put") {
        return async (...args: Parameters<R2Bucket["put"]>) => {
          await options.holdPut?.wait();
          const object = await target.put(...args);
          puts.push(args[0]);
          return object;
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    bucket: proxy as R2Bucket,
    uploads,
    puts,
    /** `{key, outcome}` of every upload, in the order they were created. */
    outcomes: () => uploads.map(({ key, outcome }) => ({ key, outcome })),
    /**
     * Keys of recorded uploads that the runtime still accepts parts for (completed and aborted
     * uploads refuse them). Each probe adds a 1-byte part, so an upload found open is aborted here.
     */
    async stillOpen(): Promise<string[]> {
      const open: string[] = [];
      for (const { key, uploadId } of uploads) {
        const upload = bucket.resumeMultipartUpload(key, uploadId);
        const accepted = await upload.uploadPart(10_000, new Uint8Array(1)).then(
          () => true,
          () => false,
        );
        if (!accepted) continue;
        open.push(key);
        await upload.abort();
      }
      return open;
    },
  };
}

/** A point where a call waits until the test lets it go; `reached` settles once a call waits there. */
export interface Hold {
  reached: Promise<void>;
  release(): void;
  wait(): Promise<void>;
}

export function hold(): Hold {
  let arrive!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    reached,
    release,
    wait: () => {
      arrive();
      return released;
    },
  };
}
