/**
 * Deletes every object whose key starts with `prefix`, a listing page (at most 1,000 keys, also R2's
 * batch-delete limit) per round. Repeatable: a removal that failed half-way is finished by calling it
 * again. Lists from the start each round, so keys deleted meanwhile never confuse a cursor.
 */
export async function deleteUnder(bucket: R2Bucket, prefix: string): Promise<void> {
  for (;;) {
    const listed = await bucket.list({ prefix, limit: 1000 });
    if (listed.objects.length > 0) await bucket.delete(listed.objects.map((o) => o.key));
    if (!listed.truncated) return;
  }
}
