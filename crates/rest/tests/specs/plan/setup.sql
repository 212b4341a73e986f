-- A table and a function whose plans are asked for; plans vary, so only their shape is checked.
CREATE TABLE projects (id int PRIMARY KEY, name text);
INSERT INTO projects VALUES (1, 'Windows 7'), (2, 'Windows 10'), (3, 'IOS');
CREATE FUNCTION project_names() RETURNS SETOF text LANGUAGE sql STABLE AS 'SELECT name FROM projects';
