-- 003: a credential carries the enrolling side's seal (a MAC over its
-- id, user and public key), so a row written into the database by anyone
-- else does not approve. Credentials enrolled before 003 have none.
ALTER TABLE credentials ADD COLUMN seal bytea;
