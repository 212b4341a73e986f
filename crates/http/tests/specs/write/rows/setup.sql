CREATE TABLE film_tags (film integer, tag text, PRIMARY KEY (film, tag));
INSERT INTO film_tags VALUES (1, 'a'), (1, 'b'), (2, 'a');
CREATE TABLE films (id integer PRIMARY KEY, title text NOT NULL, year integer, meta jsonb,
    added_by text);
INSERT INTO films VALUES (1, 'Metropolis', 1927, NULL, NULL);
CREATE TABLE people (name text PRIMARY KEY, age integer);
CREATE TABLE audit (name text PRIMARY KEY REFERENCES people (name), note text CHECK (note <> 'zed'));
