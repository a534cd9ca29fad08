"""The run catalogue: one row per run that listings read instead of every run's files
(``journal``: the files and their rules; ``rows``: what a row holds; ``snapshot``: the
Arrow view and compaction; ``listing``: records for ``db.run_index.list_runs``;
``query``: the Runs page's server-side search, sort, grouping and paging;
``manage``: archive, trash, rebuild and gc)."""
