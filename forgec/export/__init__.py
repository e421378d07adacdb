"""Exports of a build to other stacks' formats (`forgec export FORMAT BUILD -o DIR`): `hf` (Parquet for `datasets`)."""
