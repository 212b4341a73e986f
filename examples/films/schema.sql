-- The films example: films, their tags, and a few rows to start with.
CREATE TABLE films (
    id serial PRIMARY KEY,
    title text NOT NULL CHECK (title <> ''),
    released date,
    rating numeric(3, 1) CHECK (rating BETWEEN 0 AND 10),
    runtime_minutes integer,
    colour boolean NOT NULL DEFAULT true,
    details jsonb,
    watched_last timestamptz,
    watched_count integer NOT NULL DEFAULT 0
);

CREATE TABLE film_tags (
    film integer NOT NULL REFERENCES films (id) ON DELETE CASCADE,
    tag text NOT NULL,
    PRIMARY KEY (film, tag)
);

INSERT INTO films (id, title, released, rating, runtime_minutes, colour, details, watched_last, watched_count)
VALUES
    (1, 'Metropolis', '1927-01-10', 8.3, 153, false, '{"director": "Fritz Lang", "country": "DE"}', '2024-03-01 20:00:00+00', 3),
    (2, 'Seven Samurai', '1954-04-26', 8.6, 207, false, '{"director": "Akira Kurosawa", "country": "JP"}', NULL, 0),
    (3, 'Alien', '1979-05-25', 8.5, 117, true, NULL, '2023-10-31 22:30:00+00', 1);
SELECT setval('films_id_seq', 3);

INSERT INTO film_tags (film, tag)
VALUES (1, 'silent'), (1, 'science fiction'), (2, 'samurai'), (3, 'science fiction'), (3, 'horror');
