-- Relationships through views: tables kept in a schema that is not exposed, shown by views of
-- the exposed one (a junction among them); a junction only in the private schema; an exposed
-- junction table beside a view of it that renames its columns.
CREATE SCHEMA api;
CREATE SCHEMA private;

CREATE TABLE private.players (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE private.teams (id int PRIMARY KEY, title text NOT NULL);
CREATE TABLE private.rosters (
  player_id int NOT NULL REFERENCES private.players (id),
  team_id int NOT NULL REFERENCES private.teams (id),
  since int NOT NULL,
  PRIMARY KEY (player_id, team_id)
);
INSERT INTO private.players VALUES (1, 'ana'), (2, 'ben'), (3, 'cy');
INSERT INTO private.teams VALUES (1, 'reds'), (2, 'blues');
INSERT INTO private.rosters VALUES (1, 1, 2020), (2, 1, 2021), (2, 2, 2022);
CREATE VIEW api.players AS SELECT * FROM private.players;
CREATE VIEW api.teams AS SELECT * FROM private.teams;
CREATE VIEW api.rosters AS SELECT * FROM private.rosters;

CREATE TABLE api.left_side (id int PRIMARY KEY, name text);
CREATE TABLE api.right_side (id int PRIMARY KEY, name text);
CREATE TABLE private.sides (
  left_id int REFERENCES api.left_side (id),
  right_id int REFERENCES api.right_side (id),
  PRIMARY KEY (left_id, right_id)
);
INSERT INTO api.left_side VALUES (1, 'l');
INSERT INTO api.right_side VALUES (1, 'r');
INSERT INTO private.sides VALUES (1, 1);

CREATE TABLE api.songs (id int PRIMARY KEY, title text NOT NULL);
CREATE TABLE api.albums (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE api.tracks (
  song_id int REFERENCES api.songs (id),
  album_id int REFERENCES api.albums (id),
  position int NOT NULL,
  PRIMARY KEY (song_id, album_id)
);
INSERT INTO api.songs VALUES (1, 'intro'), (2, 'outro');
INSERT INTO api.albums VALUES (1, 'first'), (2, 'second');
INSERT INTO api.tracks VALUES (1, 1, 1), (2, 1, 2), (1, 2, 1);
CREATE VIEW api.tracks_renamed AS
  SELECT song_id AS song, album_id AS album, position FROM api.tracks;
