CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE DOMAIN positive AS integer CHECK (VALUE > 0);
CREATE TABLE value_types (
    id integer PRIMARY KEY,
    small smallint,
    big bigint,
    exact numeric,
    approx double precision,
    flag boolean,
    label text,
    doc jsonb,
    raw json,
    day date,
    numbers integer[],
    words text[],
    feeling mood,
    count positive
);
INSERT INTO value_types VALUES
    (1, 1, 9007199254740993, 12345678901234567890.000001, 1.5, true, 'plain', '{"a": [1, 2]}', '{"b":  null}', '2024-02-29', '{1,2,3}', '{x,"y z",NULL}', 'happy', 7),
    (2, NULL, NULL, 'NaN', '-Infinity', false, E'quote " backslash \\ newline \n tab \t', '"text"', '[]', NULL, '{}', '{}', NULL, NULL);
CREATE TABLE people (id integer PRIMARY KEY, name text, watched_last date, watched_count integer, city text);
INSERT INTO people VALUES (1, 'Ada', '2024-01-02', 5, 'London'), (2, 'Alan', NULL, 0, 'Wilmslow'), (3, 'Alan', NULL, 1, 'Princeton');
CREATE SEQUENCE head_probe;
