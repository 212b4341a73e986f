DO $$ BEGIN CREATE ROLE rest_timed_anon NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE rest_timed_user NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
ALTER ROLE rest_timed_anon SET statement_timeout = '200ms';
ALTER ROLE rest_timed_user SET statement_timeout = '5s';
-- An isolation level: the anonymous role's writes and calls run serializable. And a setting
-- only a superuser may set, which PostgREST leaves out too.
ALTER ROLE rest_timed_anon SET default_transaction_isolation = 'serializable';
ALTER ROLE rest_timed_anon SET log_min_duration_statement = '1s';
DO $$ BEGIN EXECUTE format('GRANT rest_timed_anon, rest_timed_user TO %I', current_user); END $$;
GRANT USAGE ON SCHEMA public TO rest_timed_anon, rest_timed_user;

CREATE FUNCTION current_timeout() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT pg_catalog.current_setting('statement_timeout') $$;
CREATE FUNCTION current_isolation() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT pg_catalog.current_setting('transaction_isolation') $$;
CREATE FUNCTION nap(seconds float8) RETURNS int LANGUAGE sql VOLATILE
  AS $$ SELECT pg_catalog.pg_sleep(seconds); SELECT 1 $$;
-- A function's own statement_timeout is hoisted to the call's transaction: it bounds the call.
CREATE FUNCTION nap_bounded(seconds float8) RETURNS int LANGUAGE sql VOLATILE
  SET statement_timeout = '100ms'
  AS $$ SELECT pg_catalog.pg_sleep(seconds); SELECT 1 $$;
-- A setting outside the hoisted list applies inside the function only.
CREATE FUNCTION work_mem_inside() RETURNS text LANGUAGE sql STABLE SET work_mem = '1234kB'
  AS $$ SELECT pg_catalog.current_setting('work_mem') $$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO rest_timed_anon, rest_timed_user;

-- A function's own isolation level wins over the role's.
CREATE FUNCTION repeatable_isolation() RETURNS text LANGUAGE sql STABLE
  SET default_transaction_isolation = 'repeatable read'
  AS $$ SELECT pg_catalog.current_setting('transaction_isolation') $$;
CREATE TABLE isolation_log (id serial PRIMARY KEY,
  level text DEFAULT pg_catalog.current_setting('transaction_isolation'));
GRANT SELECT, INSERT ON isolation_log TO rest_timed_anon, rest_timed_user;
GRANT USAGE ON SEQUENCE isolation_log_id_seq TO rest_timed_anon, rest_timed_user;
GRANT EXECUTE ON FUNCTION repeatable_isolation() TO rest_timed_anon, rest_timed_user;
-- A read of a relation runs at the role's level too.
CREATE VIEW isolation_now AS
  SELECT pg_catalog.current_setting('transaction_isolation') AS level,
         pg_catalog.current_setting('transaction_read_only') AS read_only;
GRANT SELECT ON isolation_now TO rest_timed_anon, rest_timed_user;

-- A role's own search_path wins over the request's (PostgREST sets the role's settings after
-- the search path).
ALTER ROLE rest_timed_user SET search_path = public, pg_catalog;
CREATE FUNCTION current_path() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT pg_catalog.current_setting('search_path') $$;
GRANT EXECUTE ON FUNCTION current_path() TO rest_timed_anon, rest_timed_user;
