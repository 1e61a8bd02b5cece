-- Real-program workload for sqlite3 under libmemtop.so.
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL, grp INTEGER);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
INSERT INTO t(name, v, grp) SELECT printf('name-%06d', x), x * 1.5, x % 97 FROM c;
BEGIN;
INSERT INTO t(name, v, grp) VALUES ('extra-1', 1.0, 1), ('extra-2', 2.0, 2);
COMMIT;
CREATE INDEX t_grp ON t(grp);
SELECT count(*), sum(v), min(name), max(name) FROM t;
SELECT grp, count(*), round(avg(v), 2) FROM t GROUP BY grp HAVING grp < 5 ORDER BY grp;
UPDATE t SET v = v * 2 WHERE grp = 3;
DELETE FROM t WHERE id % 2 = 0;
SELECT count(*), round(sum(v), 1) FROM t;
SELECT group_concat(name, ',') FROM (SELECT name FROM t ORDER BY v DESC LIMIT 5);
VACUUM;
