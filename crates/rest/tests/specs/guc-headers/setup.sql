-- response.headers and response.status set by SQL during the request's main statement (a
-- function, a trigger), after PostgREST 12.2.3's RpcSpec "GUC headers on function calls" and
-- "GUC status override" fixtures (functions VOLATILE, as there: a GET runs them read-only),
-- plus every write path.
CREATE TABLE projects (id int PRIMARY KEY, name text);
INSERT INTO projects VALUES (1, 'Windows 7'), (2, 'Windows 10'), (3, 'IOS');

CREATE FUNCTION get_projects_and_guc_headers() RETURNS SETOF projects LANGUAGE sql AS $$
  SET LOCAL "response.headers" = '[{"X-Test": "key1=val1; someValue; key2=val2"}, {"X-Test-2": "key1=val1"}]';
  SELECT * FROM projects;
$$;
CREATE FUNCTION get_int_and_guc_headers(num int) RETURNS int LANGUAGE sql AS $$
  SET LOCAL "response.headers" = '[{"X-Test":"key1=val1; someValue; key2=val2"},{"X-Test-2":"key1=val1"}]';
  SELECT num;
$$;
CREATE FUNCTION bad_guc_headers_1() RETURNS void LANGUAGE sql AS $$
  SET LOCAL "response.headers" = '{"X-Test": "invalid structure for headers"}';
$$;
CREATE FUNCTION bad_guc_headers_2() RETURNS void LANGUAGE sql AS $$
  SET LOCAL "response.headers" = '["invalid", "structure", "for", "headers"]';
$$;
CREATE FUNCTION bad_guc_headers_3() RETURNS void LANGUAGE sql AS $$
  SET LOCAL "response.headers" = '{"X-Test": "invalid", "X-Test-2": "structure", "X-Test-3": "for headers"}';
$$;
CREATE FUNCTION set_cookie_twice() RETURNS void LANGUAGE sql AS $$
  SET LOCAL "response.headers" = '[{"Set-Cookie": "sessionid=38afes7a8; HttpOnly; Path=/"}, {"Set-Cookie": "id=a3fWa; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Secure; HttpOnly"}]';
$$;
CREATE FUNCTION send_body_status_403() RETURNS json LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('response.status', '403', true);
  RETURN json_build_object('message', 'invalid user or password');
END $$;
CREATE FUNCTION send_bad_status() RETURNS json LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('response.status', 'bad', true);
  RETURN NULL;
END $$;
-- Sets of rows (and of scalars) that set the status and a header.
CREATE FUNCTION projects_accepted() RETURNS SETOF projects LANGUAGE sql STABLE AS $$
  SELECT set_config('response.status', '202', true);
  SELECT set_config('response.headers', '[{"X-Rows": "some"}]', true);
  SELECT * FROM projects ORDER BY id;
$$;
CREATE FUNCTION names_accepted() RETURNS SETOF text LANGUAGE sql STABLE AS $$
  SELECT set_config('response.status', '202', true);
  SELECT name FROM projects ORDER BY id;
$$;
CREATE FUNCTION projects_bad_status() RETURNS SETOF projects LANGUAGE sql STABLE AS $$
  SELECT set_config('response.status', 'bad', true);
  SELECT * FROM projects ORDER BY id;
$$;
-- A set past the bound up to which a call's answer waits for what it set: it streams, with
-- the usual status.
CREATE FUNCTION many_accepted() RETURNS TABLE (filler text) LANGUAGE sql STABLE AS $$
  SELECT set_config('response.status', '202', true);
  SELECT repeat('x', 1000) FROM generate_series(1, 2000);
$$;

-- A view written through INSTEAD OF triggers that set the answer's Location and status.
CREATE SCHEMA private;
CREATE TABLE private.stuff (id int PRIMARY KEY, name text);
INSERT INTO private.stuff VALUES (1, 'stuff 1');
CREATE VIEW stuff AS SELECT * FROM private.stuff;
CREATE FUNCTION location_for_stuff() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  INSERT INTO private.stuff VALUES (new.id, new.name);
  IF new.id IS NOT NULL THEN
    PERFORM set_config('response.headers',
      format('[{"Location": "/%s?id=eq.%s&overriden=true"}]', tg_table_name, new.id), true);
  END IF;
  RETURN new;
END $$;
CREATE TRIGGER location_for_stuff INSTEAD OF INSERT ON stuff
  FOR EACH ROW EXECUTE PROCEDURE location_for_stuff();
CREATE FUNCTION status_205_for_updated_stuff() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  UPDATE private.stuff SET id = new.id, name = new.name WHERE id = old.id;
  PERFORM set_config('response.status', '205', true);
  RETURN new;
END $$;
CREATE TRIGGER status_205_for_updated_stuff INSTEAD OF UPDATE ON stuff
  FOR EACH ROW EXECUTE PROCEDURE status_205_for_updated_stuff();

CREATE TABLE loc_test (id int PRIMARY KEY, c text);

-- A table whose every write sets a header naming the operation (and, for DELETE, a status),
-- with children for nested inserts.
CREATE TABLE audited (id int PRIMARY KEY, name text);
CREATE TABLE audited_notes (id serial PRIMARY KEY, audited_id int REFERENCES audited, body text);
CREATE FUNCTION audit_headers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('response.headers',
    format('[{"X-Audit": "%s"}, {"Set-Cookie": "op=%s"}, {"Set-Cookie": "table=%s"}]', tg_op, tg_op, tg_table_name), true);
  IF tg_op = 'DELETE' THEN
    PERFORM set_config('response.status', '202', true);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER audit_headers AFTER INSERT OR UPDATE OR DELETE ON audited
  FOR EACH STATEMENT EXECUTE PROCEDURE audit_headers();
CREATE FUNCTION audited_bad() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('response.status', 'bad', true);
  RETURN NULL;
END $$;
CREATE TABLE audited_bad (id int PRIMARY KEY);
CREATE TRIGGER audited_bad AFTER INSERT ON audited_bad
  FOR EACH STATEMENT EXECUTE PROCEDURE audited_bad();
