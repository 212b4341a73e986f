-- Media type handlers (PostgREST 12's test/spec/Feature/Query/CustomMediaSpec.hs): domains named
-- after media types, functions returning them, aggregates over a relation's rows (or anyelement)
-- returning them. PostgREST's fixture needs PostGIS for `lines`; here its geometries are GeoJSON
-- (jsonb) and `twkb` stands in for st_astwkb, so those answers are this fixture's own.
CREATE DOMAIN "text/plain" AS text;
CREATE DOMAIN "text/html" AS text;
CREATE DOMAIN "text/xml" AS pg_catalog.xml;
CREATE DOMAIN "application/octet-stream" AS bytea;
CREATE DOMAIN "image/png" AS bytea;
CREATE DOMAIN "application/vnd.twkb" AS bytea;
CREATE DOMAIN "application/geo+json" AS jsonb;
CREATE DOMAIN "application/vnd.geo2+json" AS jsonb;
CREATE DOMAIN "application/json" AS json;
CREATE DOMAIN "application/vnd.pgrst.object" AS json;
CREATE DOMAIN "text/tab-separated-values" AS text;
CREATE DOMAIN "text/csv" AS text;
CREATE DOMAIN "*/*" AS bytea;
CREATE DOMAIN "pg/outfunc" AS text;

CREATE TABLE clients (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO clients VALUES (1, 'Microsoft'), (2, 'Apple');
CREATE TABLE projects (id int PRIMARY KEY, name text NOT NULL, client_id int REFERENCES clients);
INSERT INTO projects VALUES (1, 'Windows 7', 1), (2, 'Windows 10', 1), (3, 'IOS', 2), (4, 'OSX', 2),
  (5, 'Orphan', NULL);
CREATE TABLE items (id bigserial PRIMARY KEY);
INSERT INTO items SELECT generate_series(1, 3);
CREATE FUNCTION always_true(items) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true';

CREATE TABLE images (name text NOT NULL, img bytea NOT NULL);
INSERT INTO images (name, img) VALUES ('A.png', decode('iVBORw0KGgoAAAANSUhEUgAAAB4AAAAeAQMAAAAB/jzhAAAABlBMVEUAAAD/AAAb/40iAAAAP0lEQVQI12NgwAbYG2AE/wEYwQMiZB4ACQkQYZEAIgqAhAGIKLCAEQ8kgMT/P1CCEUwc4IMSzA3sUIIdCHECAGSQEkeOTUyCAAAAAElFTkSuQmCC', 'base64'));

CREATE FUNCTION ret_image() RETURNS "image/png" LANGUAGE sql STABLE AS $$
  SELECT i.img::"image/png" FROM images i WHERE i.name = 'A.png';
$$;

CREATE FUNCTION welcome() RETURNS "text/plain" LANGUAGE sql STABLE AS $$
  SELECT 'Welcome to PostgREST'::"text/plain";
$$;

CREATE FUNCTION welcome_twice() RETURNS SETOF "text/plain" LANGUAGE sql STABLE AS $$
  SELECT 'Welcome to PostgREST' UNION ALL SELECT 'Welcome to PostgREST';
$$;

CREATE FUNCTION "welcome.html"() RETURNS "text/html" LANGUAGE sql STABLE AS $_$
select $$
<html>
  <head>
    <title>PostgREST</title>
  </head>
  <body>
    <h1>Welcome to PostgREST</h1>
  </body>
</html>
$$::"text/html";
$_$;

CREATE FUNCTION return_scalar_xml() RETURNS "text/xml" LANGUAGE sql STABLE AS $$
  SELECT '<my-xml-tag/>'::"text/xml"
$$;

CREATE FUNCTION "welcome.xml"() RETURNS "text/xml" LANGUAGE sql STABLE AS $_$
select $$
<html>
  <head>
    <title>PostgREST</title>
  </head>
  <body>
    <h1>Welcome to PostgREST</h1>
  </body>
</html>$$::"text/xml";
$_$;

CREATE TABLE xmltest (id integer PRIMARY KEY, xml pg_catalog.xml NOT NULL);
INSERT INTO xmltest VALUES (1, '<myxml>foo</myxml>'), (2, 'bar'), (3, '<foobar><baz/></foobar>');

CREATE FUNCTION xml_handler_transition(state "text/xml", next xmltest) RETURNS "text/xml"
  LANGUAGE sql AS $$ SELECT xmlconcat2(state, next.xml)::"text/xml"; $$;
CREATE FUNCTION xml_handler_final(data "text/xml") RETURNS "text/xml"
  LANGUAGE sql AS $$ SELECT data; $$;
CREATE AGGREGATE text_xml_agg (xmltest) (
  stype = "text/xml", sfunc = xml_handler_transition, finalfunc = xml_handler_final);

CREATE TABLE lines (id int PRIMARY KEY, name text, geom jsonb);
INSERT INTO lines VALUES
  (1, 'line-1', '{"type": "LineString", "coordinates": [[1, 1], [5, 5]]}'),
  (2, 'line-2', '{"type": "LineString", "coordinates": [[2, 2], [6, 6]]}');

-- Stands in for PostGIS' st_astwkb: some bytes of the geometry.
CREATE FUNCTION twkb(geom jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT convert_to('<' || (geom->>'type') || ':' || (geom->'coordinates')::text || '>', 'UTF8');
$$;

CREATE FUNCTION get_lines() RETURNS SETOF lines LANGUAGE sql STABLE AS $$ SELECT * FROM lines; $$;
CREATE FUNCTION get_line(id int) RETURNS "application/vnd.twkb" LANGUAGE sql STABLE AS $$
  SELECT twkb(geom)::"application/vnd.twkb" FROM lines WHERE id = get_line.id;
$$;

CREATE TABLE shop_bles (id int PRIMARY KEY, name text);
INSERT INTO shop_bles VALUES (1, 'Beacon-1'), (2, 'Beacon-2');
CREATE FUNCTION get_shop_bles() RETURNS SETOF shop_bles LANGUAGE sql STABLE AS $$
  SELECT * FROM shop_bles;
$$;

-- It can work without a final function too when the state type is already the media type.
CREATE FUNCTION twkb_handler_transition(state "application/vnd.twkb", next lines)
  RETURNS "application/vnd.twkb" LANGUAGE sql AS $$
  SELECT (state || twkb(next.geom))::"application/vnd.twkb";
$$;
CREATE AGGREGATE twkb_agg (lines) (
  initcond = '', stype = "application/vnd.twkb", sfunc = twkb_handler_transition);

CREATE FUNCTION geo2json_trans(state "application/vnd.geo2+json", next anyelement)
  RETURNS "application/vnd.geo2+json" LANGUAGE sql AS $$
  SELECT (state || to_jsonb(next))::"application/vnd.geo2+json";
$$;
CREATE FUNCTION geo2json_final(data "application/vnd.geo2+json")
  RETURNS "application/vnd.geo2+json" LANGUAGE sql AS $$
  SELECT (jsonb_build_object('type', 'FeatureCollection', 'hello', 'world'))::"application/vnd.geo2+json";
$$;
CREATE AGGREGATE geo2json_agg_any(anyelement) (
  initcond = '[]', stype = "application/vnd.geo2+json", sfunc = geo2json_trans,
  finalfunc = geo2json_final);

CREATE FUNCTION geo2json_trans(state "application/vnd.geo2+json", next shop_bles)
  RETURNS "application/vnd.geo2+json" LANGUAGE sql AS $$
  SELECT '"anyelement overridden"'::"application/vnd.geo2+json";
$$;
CREATE AGGREGATE geo2json_agg(shop_bles) (
  initcond = '[]', stype = "application/vnd.geo2+json", sfunc = geo2json_trans);

-- Overrides application/json for one table.
CREATE TABLE ov_json ();
CREATE FUNCTION ov_json_trans(state "application/json", next ov_json) RETURNS "application/json"
  LANGUAGE sql AS $$ SELECT null::"application/json"; $$;
CREATE AGGREGATE ov_json_agg(ov_json) (
  initcond = '{"overridden": "true"}', stype = "application/json", sfunc = ov_json_trans);

-- Overrides application/geo+json for one table.
CREATE FUNCTION lines_geojson_trans(state jsonb, next lines) RETURNS "application/geo+json"
  LANGUAGE sql AS $$
  SELECT (state || jsonb_build_array(jsonb_build_object('type', 'Feature', 'geometry', next.geom,
    'properties', jsonb_build_object('id', next.id, 'name', next.name))))::"application/geo+json";
$$;
CREATE FUNCTION lines_geojson_final(data jsonb) RETURNS "application/geo+json" LANGUAGE sql AS $$
  SELECT jsonb_build_object('type', 'FeatureCollection',
    'crs', json_build_object('type', 'name', 'properties', json_build_object('name', 'EPSG:4326')),
    'features', data)::"application/geo+json";
$$;
CREATE AGGREGATE lines_geojson_agg (lines) (
  initcond = '[]', stype = "application/geo+json", sfunc = lines_geojson_trans,
  finalfunc = lines_geojson_final);

-- Tries to override application/vnd.pgrst.object: vendor media types cannot be.
CREATE FUNCTION pgrst_obj_json_trans(state "application/vnd.pgrst.object", next anyelement)
  RETURNS "application/vnd.pgrst.object" LANGUAGE sql AS $$
  SELECT null::"application/vnd.pgrst.object";
$$;
CREATE AGGREGATE pgrst_obj_agg(anyelement) (
  initcond = '{"overridden": "true"}', stype = "application/vnd.pgrst.object",
  sfunc = pgrst_obj_json_trans);

-- A "text/tab-separated-values" media type.
CREATE FUNCTION tsv_trans(state text, next projects) RETURNS "text/tab-separated-values"
  LANGUAGE sql AS $$
  SELECT (state || next.id::text || E'\t' || next.name || E'\t' || coalesce(next.client_id::text, '')
    || E'\n')::"text/tab-separated-values";
$$;
CREATE FUNCTION tsv_final(data "text/tab-separated-values") RETURNS "text/tab-separated-values"
  LANGUAGE sql AS $$ SELECT (E'id\tname\tclient_id\n' || data)::"text/tab-separated-values"; $$;
CREATE AGGREGATE tsv_agg (projects) (
  initcond = '', stype = "text/tab-separated-values", sfunc = tsv_trans, finalfunc = tsv_final);

-- Overrides CSV: a BOM, and an attachment.
CREATE FUNCTION bom_csv_trans(state text, next lines) RETURNS "text/csv" LANGUAGE sql AS $$
  SELECT (state || next.id::text || ',' || next.name || ',' || next.geom::text || E'\n')::"text/csv";
$$;
CREATE FUNCTION bom_csv_final(data "text/csv") RETURNS "text/csv" LANGUAGE sql AS $$
  SELECT set_config('response.headers',
    '[{"Content-Disposition": "attachment; filename=\"lines.csv\""}]', true);
  SELECT (convert_from(decode(E'EFBBBF', 'hex'), 'UTF8') || (E'id,name,geom\n' || data))::"text/csv";
$$;
CREATE AGGREGATE bom_csv_agg (lines) (
  initcond = '', stype = "text/csv", sfunc = bom_csv_trans, finalfunc = bom_csv_final);

-- The "any" handler.
CREATE FUNCTION ret_any_mt() RETURNS "*/*" LANGUAGE sql STABLE AS $$ SELECT 'any'::"*/*"; $$;

CREATE FUNCTION ret_some_mt() RETURNS "*/*" LANGUAGE plpgsql STABLE AS $$
declare
  req_accept text := current_setting('request.headers', true)::json->>'accept';
  resp bytea;
begin
  case req_accept
    when 'app/chico' then
      perform set_config('response.headers', json_build_array(json_build_object('Content-Type', req_accept))::text, true);
      resp := 'chico';
    when 'app/harpo' then
      perform set_config('response.headers', json_build_array(json_build_object('Content-Type', req_accept))::text, true);
      resp := 'harpo';
    when '*/*' then
      perform set_config('response.headers', json_build_array(json_build_object('Content-Type', 'app/groucho'))::text, true);
      resp := 'groucho';
    else
      raise sqlstate 'PT406' using message = 'Not Acceptable';
  end case;
  return resp;
end; $$;

CREATE TABLE some_numbers AS SELECT x::int AS val FROM generate_series(1, 10) x;

CREATE FUNCTION some_trans(state "*/*", next some_numbers) RETURNS "*/*" LANGUAGE sql AS $$
  SELECT (state || E'\n' || next.val::text::bytea)::"*/*";
$$;
CREATE FUNCTION some_final(data "*/*") RETURNS "*/*" LANGUAGE plpgsql AS $$
declare
  req_accept text := current_setting('request.headers', true)::json->>'accept';
  prefix bytea;
begin
  case req_accept
    when 'magic/number' then
      perform set_config('response.headers', json_build_array(json_build_object('Content-Type', req_accept))::text, true);
      prefix := 'magic';
    when 'crazy/bingo' then
      perform set_config('response.headers', json_build_array(json_build_object('Content-Type', req_accept))::text, true);
      prefix := 'crazy';
    else
      prefix := 'anything';
  end case;
  return (prefix || data)::"*/*";
end; $$;
CREATE AGGREGATE some_agg (some_numbers) (
  initcond = '', stype = "*/*", sfunc = some_trans, finalfunc = some_final);

-- A generic media type for any relation: each row's text.
CREATE FUNCTION outfunc_trans(state text, next anyelement) RETURNS "pg/outfunc" LANGUAGE sql AS $$
  SELECT (state || next::text || E'\n')::"pg/outfunc";
$$;
CREATE AGGREGATE outfunc_agg (anyelement) (
  initcond = '', stype = "pg/outfunc", sfunc = outfunc_trans);

DO $$ BEGIN CREATE ROLE rest_media_anon NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
GRANT USAGE ON SCHEMA public TO rest_media_anon;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO rest_media_anon;

-- Single unnamed parameters taking the body raw (PostgREST's RpcSpec), answered raw.
CREATE FUNCTION unnamed_text_param(text) RETURNS "text/plain" LANGUAGE sql AS $$
  SELECT $1::"text/plain";
$$;
CREATE FUNCTION unnamed_xml_param(pg_catalog.xml) RETURNS "text/xml" LANGUAGE sql AS $$
  SELECT $1::"text/xml";
$$;
CREATE FUNCTION unnamed_bytea_param(bytea) RETURNS "application/octet-stream" LANGUAGE sql AS $$
  SELECT $1::"application/octet-stream";
$$;
CREATE FUNCTION overloaded_unnamed_param(json) RETURNS json LANGUAGE sql AS 'SELECT $1';
CREATE FUNCTION overloaded_unnamed_param() RETURNS int LANGUAGE sql STABLE AS 'SELECT 1';
CREATE FUNCTION overloaded_unnamed_param(x int, y int) RETURNS int LANGUAGE sql AS 'SELECT x + y';
CREATE FUNCTION overloaded_unnamed_param(bytea) RETURNS "application/octet-stream"
  LANGUAGE sql AS $$ SELECT $1::"application/octet-stream"; $$;
CREATE FUNCTION overloaded_unnamed_param(text) RETURNS "text/plain"
  LANGUAGE sql AS $$ SELECT $1::"text/plain"; $$;

-- Writes answered by handlers (60-writes.spec).
GRANT INSERT, UPDATE, DELETE ON lines, projects, some_numbers, clients TO rest_media_anon;
