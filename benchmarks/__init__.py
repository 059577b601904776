"""cuda.coop benchmarks (issue 3): `python -m benchmarks OUTDIR`; see __main__.py."""
