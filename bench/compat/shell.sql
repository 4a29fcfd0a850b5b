-- bench/compat/shell.sql: fed to sqlite3's own shell (sqlite3 -batch :memory: < shell.sql) by
-- bench/compat.py. Ends with an error on purpose: the shell reports it on stderr and exits 1.
.headers on
.mode column
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL, tags TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO t(name, score, tags) SELECT printf('n%05d', x), (x * 7919) % 1000 / 10.0,
  json_array(x % 3, x % 5, 'k' || (x % 7)) FROM c;
CREATE INDEX t_score ON t(score);
SELECT count(*), sum(score), min(name), max(name) FROM t;
SELECT score, count(*) AS n FROM t GROUP BY score ORDER BY n DESC, score LIMIT 5;
SELECT name, json_extract(tags, '$[2]') AS k FROM t WHERE score > 99.5 ORDER BY name LIMIT 5;
SELECT value, count(*) FROM t, json_each(t.tags) WHERE t.id <= 1000 GROUP BY value ORDER BY 2 DESC, 1 LIMIT 4;
CREATE VIRTUAL TABLE doc USING fts3(body);
INSERT INTO doc(body) SELECT 'alpha beta ' || name || ' gamma' FROM t WHERE id % 50 = 0;
SELECT count(*) FROM doc WHERE doc MATCH 'beta n00100';
SELECT name, rank() OVER (ORDER BY score DESC, id) AS r FROM t WHERE id < 30 ORDER BY r LIMIT 3;
BEGIN;
UPDATE t SET score = score + 1 WHERE id % 2 = 0;
SAVEPOINT s1;
DELETE FROM t WHERE id > 10000;
ROLLBACK TO s1;
COMMIT;
SELECT count(*), round(sum(score), 1) FROM t;
PRAGMA integrity_check;
.mode list
SELECT sqlite_compileoption_used('THREADSAFE=1'), typeof(1.5), quote(x'00ff'), hex(zeroblob(3));
SELECT * FROM no_such_table;
