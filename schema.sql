-- The whole current schema, for a fresh database: the tests and `npm run dev` (local D1) load it.
-- A deployed database changes only through migrations/ (`wrangler d1 migrations apply`); a schema
-- change is a new migration and the same change here (test/node/schema-migrations.test.ts
-- checks that the migrations give exactly this schema). Every statement is idempotent.
PRAGMA foreign_keys = ON;

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

-- One row per user and UTC day; `used` counts successful processing calls (API and web). The
-- user's Durable Object keeps the running count and writes it here within about a second of each
-- charged conversion (src/user-gate); a count only grows within its day.
CREATE TABLE IF NOT EXISTS daily_usage (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  day     TEXT    NOT NULL, -- YYYY-MM-DD, UTC
  used    INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (user_id, day)
);

-- The record of every result file in R2 (`results/<uuid>`), written beside the upload. Downloads
-- read the object's own metadata, not this; the account page lists these, the cron job deletes by them.
CREATE TABLE IF NOT EXISTS results (
  uuid       TEXT    PRIMARY KEY, -- 32 lowercase hex characters, 128 random bits
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  operation  TEXT    NOT NULL,
  format     TEXT    NOT NULL,
  filename   TEXT    NOT NULL,
  size       INTEGER NOT NULL,
  width      INTEGER NOT NULL,
  height     INTEGER NOT NULL,
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
