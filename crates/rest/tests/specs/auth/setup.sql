-- Row-level security by the token's subject; the anonymous role reads public notes only.
DO $$ BEGIN CREATE ROLE rest_web_anon NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE rest_web_user NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
GRANT USAGE ON SCHEMA public TO rest_web_anon, rest_web_user;
CREATE TABLE notes (id int PRIMARY KEY, owner text NOT NULL, public boolean NOT NULL DEFAULT false, body text);
ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON notes TO rest_web_anon;
GRANT SELECT, INSERT, UPDATE, DELETE ON notes TO rest_web_user;
CREATE POLICY anon_public ON notes FOR SELECT TO rest_web_anon USING (public);
CREATE POLICY own ON notes TO rest_web_user
  USING (owner = current_setting('request.jwt.claims', true)::json->>'sub')
  WITH CHECK (owner = current_setting('request.jwt.claims', true)::json->>'sub');
INSERT INTO notes VALUES (1, 'alice', true, 'hello'), (2, 'alice', false, 'alice only'), (3, 'bob', false, 'bob only');
CREATE FUNCTION whoami() RETURNS json LANGUAGE sql STABLE AS
  $$ SELECT json_build_object('role', current_user, 'sub', current_setting('request.jwt.claims', true)::json->>'sub') $$;
GRANT EXECUTE ON FUNCTION whoami() TO rest_web_anon, rest_web_user;
