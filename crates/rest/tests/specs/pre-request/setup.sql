-- A pre-request function that refuses a banned subject and shapes answers, and functions that
-- set the answer's status and headers themselves.
DO $$ BEGIN CREATE ROLE rest_web_anon NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE rest_web_user NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
GRANT USAGE ON SCHEMA public TO rest_web_anon, rest_web_user;
CREATE TABLE things (id int PRIMARY KEY, name text);
INSERT INTO things VALUES (1, 'one'), (2, 'two');
GRANT SELECT, INSERT ON things TO rest_web_anon, rest_web_user;
CREATE FUNCTION check_request() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('request.jwt.claims', true)::json ->> 'sub' = 'mallory' THEN
    RAISE insufficient_privilege USING MESSAGE = 'mallory is banned';
  END IF;
  IF current_setting('request.headers', true)::json ->> 'x-no-cache' = 'yes' THEN
    PERFORM set_config('response.headers', '[{"Cache-Control": "no-store"}]', true);
  END IF;
  IF current_setting('request.headers', true)::json ->> 'x-teapot' = 'yes' THEN
    PERFORM set_config('response.status', '418', true);
  END IF;
  IF current_setting('request.headers', true)::json ->> 'x-bad-headers' = 'yes' THEN
    PERFORM set_config('response.headers', '{"not": "an array"}', true);
  END IF;
END $$;
CREATE FUNCTION create_thing(name text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE new_id int;
BEGIN
  INSERT INTO things VALUES ((SELECT max(id) + 1 FROM things), name) RETURNING id INTO new_id;
  PERFORM set_config('response.status', '201', true);
  PERFORM set_config('response.headers', format('[{"Location": "/things?id=eq.%s"}]', new_id), true);
  RETURN new_id;
END $$;
CREATE FUNCTION teapot() RETURNS json LANGUAGE plpgsql STABLE AS $$
BEGIN
  PERFORM set_config('response.status', 'not a number', true);
  RETURN '{}'::json;
END $$;
