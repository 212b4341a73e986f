\i ../fixtures.sql
CREATE TABLE secrets (id int PRIMARY KEY, value text);
INSERT INTO secrets VALUES (1, 'hidden');
REVOKE ALL ON secrets FROM rest_anon;
