-- Result records are written beside their R2 upload, before R2 has named the object's ETag, and
-- downloads take the ETag from R2 or the Cache API, never from the record.
ALTER TABLE results DROP COLUMN etag;

-- Idempotency-Key records are kept by each user's Durable Object, beside the day's count (src/user-gate).
DROP TABLE IF EXISTS idempotency_keys;
