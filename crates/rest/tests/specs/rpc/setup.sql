\i ../fixtures.sql

-- Result shapes whose columns are the function's own (20-read-params.spec): TABLE with one
-- column, SETOF with OUT parameters, a single OUT and an INOUT parameter, SETOF a composite
-- type that is no table, and a volatile set-returning function that logs each call.
CREATE FUNCTION title_list() RETURNS TABLE (title text) LANGUAGE sql STABLE
  AS 'SELECT title FROM books ORDER BY id';
CREATE FUNCTION book_pages(OUT id int, OUT pages int) RETURNS SETOF record LANGUAGE sql STABLE
  AS 'SELECT id, pages FROM books ORDER BY id';
CREATE FUNCTION plus_one(num int, OUT num_plus_one int) LANGUAGE sql IMMUTABLE
  AS 'SELECT num + 1';
CREATE FUNCTION bump(INOUT num int) LANGUAGE sql IMMUTABLE AS 'SELECT num + 1';
CREATE FUNCTION scored_books() RETURNS SETOF pair LANGUAGE sql STABLE
  AS 'SELECT ROW(title, pages)::pair FROM books ORDER BY id';
CREATE TABLE calls (n serial PRIMARY KEY, fn text NOT NULL);
CREATE FUNCTION logged_titles() RETURNS TABLE (title text, pages int) LANGUAGE sql VOLATILE AS $$
  INSERT INTO calls (fn) VALUES ('logged_titles');
  SELECT title, pages FROM books ORDER BY id;
$$;
-- Declared with no volatility, so VOLATILE, and only reading: GET may call it.
CREATE FUNCTION volatile_sum(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b';
