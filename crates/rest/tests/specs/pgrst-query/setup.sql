-- Cases ported from PostgREST's own test suite (test/spec/Feature/Query/*Spec.hs), each
-- answer as PostgREST's spec states it; a small fixture of a few of its tables, written here.
CREATE TABLE items (id bigserial PRIMARY KEY);
INSERT INTO items SELECT generate_series(1, 15);
CREATE FUNCTION always_true(items) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE FUNCTION anti_id(items) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1.id * -1';

CREATE TABLE simple_pk (k varchar PRIMARY KEY, extra varchar NOT NULL);
INSERT INTO simple_pk VALUES ('xyyx', 'u'), ('xYYx', 'v');

CREATE TABLE no_pk (a varchar, b varchar);
INSERT INTO no_pk VALUES (NULL, NULL), ('1', '0'), ('2', '0');

CREATE TABLE nullable_integer (a int);
INSERT INTO nullable_integer VALUES (NULL);

CREATE TABLE chores (id int PRIMARY KEY, name text, done bool);
INSERT INTO chores VALUES (1, 'take out the garbage', true), (2, 'do the laundry', false),
  (3, 'wash the dishes', NULL);

CREATE TABLE tsearch (text_search_vector tsvector);
INSERT INTO tsearch VALUES (to_tsvector('english', 'It''s kind of fun to do the impossible')),
  (to_tsvector('english', 'But also fun to do what is possible')),
  (to_tsvector('english', 'Fat cats ate rats')),
  (to_tsvector('french', 'C''est un peu amusant de faire l''impossible')),
  (to_tsvector('german', 'Es ist eine Art Spaß, das Unmögliche zu machen'));

CREATE TABLE complex_items (id bigint NOT NULL, name text, settings json, arr_data int[],
  "field-with_sep" int NOT NULL DEFAULT 1);
INSERT INTO complex_items VALUES (1, 'One', '{"foo":{"int":1,"bar":"baz"}}', '{1}', DEFAULT),
  (2, 'Two', '{"foo":{"int":1,"bar":"baz"}}', '{1,2}', DEFAULT),
  (3, 'Three', '{"foo":{"int":1,"bar":"baz"}}', '{1,2,3}', 3);

CREATE TABLE clients (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO clients VALUES (1, 'Microsoft'), (2, 'Apple');
CREATE TABLE projects (id int PRIMARY KEY, name text NOT NULL,
  client_id int CONSTRAINT client REFERENCES clients (id));
INSERT INTO projects VALUES (1, 'Windows 7', 1), (2, 'Windows 10', 1), (3, 'IOS', 2),
  (4, 'OSX', 2), (5, 'Orphan', NULL);
CREATE TABLE tasks (id int PRIMARY KEY, name text NOT NULL,
  project_id int CONSTRAINT project REFERENCES projects (id));
INSERT INTO tasks VALUES (1, 'Design w7', 1), (2, 'Code w7', 1), (3, 'Design w10', 2),
  (4, 'Code w10', 2), (5, 'Design IOS', 3), (6, 'Code IOS', 3), (7, 'Design OSX', 4),
  (8, 'Code OSX', 4);
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO users VALUES (1, 'Angela Martin'), (2, 'Michael Scott'), (3, 'Dwight Schrute');
CREATE TABLE users_tasks (user_id int NOT NULL REFERENCES users (id),
  task_id int NOT NULL REFERENCES tasks (id), PRIMARY KEY (task_id, user_id));
INSERT INTO users_tasks VALUES (1, 1), (1, 2), (1, 3), (1, 4), (2, 5), (2, 6), (2, 7), (3, 1),
  (3, 5);

CREATE TABLE w_or_wo_comma_names (name text);
INSERT INTO w_or_wo_comma_names VALUES ('Hebdon, John'), ('Williams, Mary'), ('Smith, Joseph'),
  ('David White'), ('Larry Thompson'), ('Double O Seven(007)'), ('"'),
  ('Double"Quote"McGraw"'), ('\');

-- AndOrParamsSpec's tables.
CREATE TABLE entities (id int PRIMARY KEY, name text, arr int[], text_search_vector tsvector);
INSERT INTO entities VALUES (1, 'entity 1', '{1}', '''bar'':2 ''foo'':1'),
  (2, 'entity 2', '{1,2}', '''baz'':1 ''qux'':2'), (3, 'entity 3', '{1,2,3}', NULL),
  (4, NULL, NULL, NULL);
CREATE TABLE child_entities (id int PRIMARY KEY, name text, parent_id int REFERENCES entities (id));
INSERT INTO child_entities VALUES (1, 'child entity 1', 1), (2, 'child entity 2', 1),
  (3, 'child entity 3', 2), (4, 'child entity 4', 1), (5, 'child entity 5', 1),
  (6, 'child entity 6', 2);
CREATE TABLE grandchild_entities (id int PRIMARY KEY, name text,
  parent_id int REFERENCES child_entities (id), jsonb_col jsonb);
INSERT INTO grandchild_entities VALUES (1, 'grandchild entity 1', 1, NULL),
  (2, 'grandchild entity 2', 1, NULL), (3, 'grandchild entity 3', 2, NULL),
  (4, '(grandchild,entity,4)', 2, '{"a": {"b":"foo"}}'), (5, '(grandchild,entity,5)', 2, '{"b":"bar"}');
CREATE TABLE ranges (id int PRIMARY KEY, range numrange);
INSERT INTO ranges VALUES (1, '[1,3]'), (2, '[3,6]'), (3, '[6,9]'), (4, '[9,12]'), (5, NULL);

-- Full-text search on text and jsonb columns (to_tsvector applied), and on a tsvector domain.
CREATE DOMAIN tsvector_not_null AS tsvector NOT NULL;
CREATE TABLE tsearch_to_tsvector (text_search text, jsonb_search jsonb,
  text_search_domain tsvector_not_null DEFAULT '');
INSERT INTO tsearch_to_tsvector (text_search) VALUES ('It''s kind of fun to do the impossible'),
  ('But also fun to do what is possible'), ('Fat cats ate rats'),
  ('C''est un peu amusant de faire l''impossible'),
  ('Es ist eine Art Spaß, das Unmögliche zu machen');
UPDATE tsearch_to_tsvector SET jsonb_search = jsonb_build_object('text_search', text_search),
  text_search_domain = to_tsvector('simple', text_search);

-- JsonOperatorSpec's tables.
CREATE TABLE json_arr (id int PRIMARY KEY, data json);
INSERT INTO json_arr VALUES (1, '[1, 2, 3]'), (2, '[4, 5, 6]'), (3, '[[9, 8, 7], [11, 12, 13]]'),
  (4, '[[[5, 6], 7, 8]]'), (5, '[{"a": "A"}, {"b": "B"}]'), (6, '[{"a": [1,2,3]}, {"b": [4,5]}]'),
  (7, '{"c": [1,2,3], "d": [4,5]}'), (8, '{"c": [{"d": [4,5,6,7,8]}]}'),
  (9, '[{"0xy1": [1,{"23-xy-45": [2, {"xy-6": [3]}]}]}]'),
  (10, '{"!@#$%^&*_a": [{"!@#$%^&*_b": 1}, {"!@#$%^&*_c": [2]}], "!@#$%^&*_d": {"!@#$%^&*_e": 3}}');
CREATE TABLE json_table (data json);
INSERT INTO json_table VALUES ('{"foo":{"bar":"baz"},"id":1}'), ('{"id":3}'), ('{"id":0}');
CREATE TABLE jsonb_test (id int PRIMARY KEY, data jsonb);
INSERT INTO jsonb_test VALUES (1, '{ "a": {"b": 2} }'), (2, '{ "c": [1,2,3] }'),
  (3, '[{ "d": "test" }]'), (4, '{ "e": 1 }');
CREATE TYPE complex AS (r double precision, i double precision);
CREATE TABLE fav_numbers (num complex, person text);
INSERT INTO fav_numbers VALUES (ROW(0.5, 0.5), 'A'), (ROW(0.6, 0.6), 'B');
CREATE TABLE arrays (id int PRIMARY KEY, numbers int[], numbers_mult int[][]);
INSERT INTO arrays VALUES (0, '{1,2,3}', '{{1,2,3},{4,5,6},{7,8,9}}'),
  (1, '{11,12,13}', '{{11,12,13},{14,15,16},{17,18,19}}');

-- RangeSpec: an empty table and a set-returning function over items.
CREATE TABLE menagerie (id int PRIMARY KEY);
CREATE FUNCTION getitemrange(min bigint, max bigint) RETURNS SETOF items LANGUAGE sql STABLE
  AS 'SELECT * FROM items WHERE id > $1 AND id <= $2';

-- EmbedDisambiguationSpec's tables: two keys to one table, self references, one-to-one.
CREATE TABLE person (id int PRIMARY KEY, name varchar NOT NULL);
INSERT INTO person VALUES (1, 'John'), (2, 'Jane'), (3, 'Jake'), (4, 'Julie');
CREATE TABLE message (id int PRIMARY KEY, body text NOT NULL DEFAULT '',
  sender bigint NOT NULL REFERENCES person (id), recipient bigint NOT NULL REFERENCES person (id));
INSERT INTO message VALUES (1, 'Hello Jane', 1, 2), (2, 'Hi John', 2, 1),
  (3, 'How are you doing?', 1, 2), (4, 'Hey Julie', 3, 4), (5, 'What''s up Jake', 4, 3);
CREATE TABLE addresses (id int NOT NULL UNIQUE, address text NOT NULL);
INSERT INTO addresses VALUES (1, 'address 1'), (2, 'address 2'), (3, 'address 3'), (4, 'address 4');
CREATE TABLE orders (id int NOT NULL UNIQUE, name text NOT NULL,
  billing_address_id int CONSTRAINT billing REFERENCES addresses (id),
  shipping_address_id int CONSTRAINT shipping REFERENCES addresses (id));
INSERT INTO orders VALUES (1, 'order 1', 1, 2), (2, 'order 2', 3, 4);
CREATE TABLE family_tree (id text PRIMARY KEY, name text NOT NULL,
  parent text CONSTRAINT pptr REFERENCES family_tree (id));
INSERT INTO family_tree VALUES ('1', 'Parental Unit', NULL), ('2', 'Kid One', '1'),
  ('3', 'Kid Two', '1'), ('4', 'Grandkid One', '2'), ('5', 'Grandkid Two', '3');
CREATE TABLE managers (id int PRIMARY KEY, name text);
INSERT INTO managers VALUES (1, 'Referee Manager'), (2, 'Auditor Manager'), (3, 'Acme Manager'),
  (4, 'Umbrella Manager'), (5, 'Cyberdyne Manager'), (6, 'Oscorp Manager');
CREATE TABLE organizations (id int PRIMARY KEY, name text,
  referee int REFERENCES organizations (id), auditor int REFERENCES organizations (id),
  manager_id int CONSTRAINT manager REFERENCES managers (id));
INSERT INTO organizations VALUES (1, 'Referee Org', NULL, NULL, 1), (2, 'Auditor Org', NULL, NULL, 2),
  (3, 'Acme', 1, 2, 3), (4, 'Umbrella', 1, 2, 4), (5, 'Cyberdyne', 3, 4, 5), (6, 'Oscorp', 3, 4, 6);
CREATE TABLE second (id int PRIMARY KEY, name text);
CREATE TABLE first (id int PRIMARY KEY, name text, second_id_1 int REFERENCES second UNIQUE,
  second_id_2 int REFERENCES second UNIQUE);
CREATE TABLE big_projects (big_project_id serial PRIMARY KEY, name text);
INSERT INTO big_projects VALUES (1, 'big project 1'), (2, 'big project 2');
CREATE TABLE sites (site_id serial PRIMARY KEY, name text,
  main_project_id int CONSTRAINT main_project REFERENCES big_projects (big_project_id));
INSERT INTO sites VALUES (1, 'site 1', 1), (2, 'site 2', NULL), (3, 'site 3', 2), (4, 'site 4', NULL);
CREATE TABLE jobs (job_id uuid, name text, site_id int NOT NULL REFERENCES sites (site_id),
  big_project_id int NOT NULL REFERENCES big_projects (big_project_id),
  PRIMARY KEY (job_id, site_id, big_project_id));
INSERT INTO jobs VALUES ('bc5d5362-b881-438f-b9f5-7417e08704ed', 'job 1-1', 1, 1),
  ('3bd52697-033b-4edd-8a28-46a9c04b7c1e', 'job 2-1', 2, 1),
  ('e6e67e4e-19b1-11e9-ab14-d663bd873d93', 'job 2-2', 2, 2);

-- QuerySpec's odd names.
CREATE TABLE has_count_column (id int, count int);
CREATE TABLE clashing_column (t text);
CREATE TABLE "Escap3e;" ("so6meIdColumn" int PRIMARY KEY);
INSERT INTO "Escap3e;" VALUES (1), (2), (3), (4), (5);
CREATE TABLE "ghostBusters" ("escapeId" int NOT NULL REFERENCES "Escap3e;" ("so6meIdColumn"));
INSERT INTO "ghostBusters" VALUES (1), (3), (5);
CREATE TABLE "do$llar$s" ("a$num$" numeric);
INSERT INTO "do$llar$s" VALUES (100), (200);
