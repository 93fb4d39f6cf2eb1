/** The bucket with its `get`s counted (R2 round trips of a search or a read). */
export function countingGets(bucket: R2Bucket) {
  const counter = { gets: 0 };
  const proxy = new Proxy(bucket, {
    get(target, property) {
      if (property === "get") {
        return (key: string, options?: R2GetOptions) => {
          counter.gets++;
          return target.get(key, options);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket: proxy as R2Bucket, counter };
}
