-- The first schema (what schema.sql was when migrations began). Applied by
-- `wrangler d1 migrations apply edge-image-api --remote`; IF NOT EXISTS lets it be recorded as applied on a
-- database that was set up with schema.sql before migrations existed.
CREATE TABLE IF NOT EXISTS users (
  id                   INTEGER PRIMARY KEY,
  email                TEXT    NOT NULL UNIQUE COLLATE NOCASE,
  plan                 TEXT    NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro')),
  -- ISO-8601 UTC; NULL means no end date. A Pro plan past this moment is treated as Free.
  subscription_ends_at TEXT,
  created_at           TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE IF NOT EXISTS api_keys (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         TEXT    NOT NULL,
  -- First characters of the key, shown to people and used by `admin revoke-key`.
  prefix       TEXT    NOT NULL,
  -- Hex SHA-256 of the whole key; the key itself is never stored.
  key_hash     TEXT    NOT NULL UNIQUE,
  created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  last_used_at TEXT,
  revoked_at   TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_user ON api_keys (user_id);
CREATE INDEX IF NOT EXISTS api_keys_prefix ON api_keys (prefix);

-- One row per user and UTC day; `used` counts successful processing calls (API and web).
CREATE TABLE IF NOT EXISTS daily_usage (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  day     TEXT    NOT NULL, -- YYYY-MM-DD, UTC
  used    INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (user_id, day)
);

CREATE TABLE IF NOT EXISTS results (
  uuid       TEXT    PRIMARY KEY, -- 32 lowercase hex characters, 128 random bits
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  operation  TEXT    NOT NULL,
  format     TEXT    NOT NULL,
  filename   TEXT    NOT NULL,
  size       INTEGER NOT NULL,
  width      INTEGER NOT NULL,
  height     INTEGER NOT NULL,
  etag       TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  expires_at TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS results_expires ON results (expires_at);
CREATE INDEX IF NOT EXISTS results_user ON results (user_id, created_at);

-- Web accounts. A user made by `npm run admin -- create-user` has no row here until they
-- claim the account on the sign-up page with one of its API keys (see README, Decisions).
CREATE TABLE IF NOT EXISTS passwords (
  user_id    INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  -- "pbkdf2-sha256$<iterations>$<salt, base64>$<hash, base64>"
  hash       TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
  -- Hex SHA-256 of the random id in the cookie: a copy of this table opens no session.
  id_hash    TEXT    PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- Synchronizer token every form post and converter call of this session must echo.
  csrf_token TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  expires_at TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions (expires_at);

-- Log-in and sign-up attempts counted per subject ("account:<email>", "address:<ip>", ...);
-- a right password gives its log-in attempt back, so what stays counted are failures.
CREATE TABLE IF NOT EXISTS login_throttle (
  subject        TEXT    PRIMARY KEY,
  attempts       INTEGER NOT NULL,
  window_ends_at TEXT    NOT NULL
);

-- A new API key waiting to be shown once, on the page the key form redirects to. Only its
-- AES-GCM ciphertext is here; the AES key is in the creating browser's cookie alone, so neither
-- this table nor the cookie holds the key in plain. Gone once shown, or after 10 minutes.
CREATE TABLE IF NOT EXISTS key_reveals (
  session_id_hash TEXT    PRIMARY KEY REFERENCES sessions (id_hash) ON DELETE CASCADE,
  key_id          INTEGER NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  -- base64 of the 12-byte IV followed by the ciphertext
  sealed          TEXT    NOT NULL,
  expires_at      TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS key_reveals_expires ON key_reveals (expires_at);

-- Idempotency-Key of processing calls: one row per user and key. While the first call with the
-- key runs, `response` is NULL and `expires_at` is when the claim lapses (a Worker that died);
-- once it succeeded, `response` is its JSON answer, replayed until the result expires.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key         TEXT    NOT NULL,
  -- Hex SHA-256 of the request: operation, text fields, file name and file bytes
  fingerprint TEXT    NOT NULL,
  response    TEXT,
  created_at  TEXT    NOT NULL,
  expires_at  TEXT    NOT NULL,
  PRIMARY KEY (user_id, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_expires ON idempotency_keys (expires_at);
