-- The SQL equivalent of `analyze overview` (issue 12), for bench/analyze.sh:
-- the one scan the overview's figures come from, counts by outcome, layer
-- and final HTTP status with the first and last start (analyze derives its
-- tables from these groups with classify's rules, as a reader would from
-- this result). DATA is replaced by the dataset directory.
SELECT outcome, layer, http_statuses[-1] AS final_status, count(*) AS n, min(started_at), max(started_at)
FROM read_parquet('DATA/exchanges/*/*.parquet')
GROUP BY ALL ORDER BY n DESC;
