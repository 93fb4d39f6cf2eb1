/** The bucket with its `get`s counted (R2 round trips of a search or a read), and the bytes of range reads. */
export function countingGets(bucket: R2Bucket) {
  const counter = { gets: 0, rangeBytes: 0 };
  const proxy = new Proxy(bucket, {
    get(target, property) {
      if (property === "get") {
        return (key: string, options?: R2GetOptions) => {
          counter.gets++;
          const range = options?.range as { length?: number } | undefined;
          counter.rangeBytes += range?.length ?? 0;
          return target.get(key, options);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket: proxy as R2Bucket, counter };
}
