"""Memory benchmarks' published formats (LongMemEval, LoCoMo) read into the harness's items, and
the stratified draw a study takes from them. Nothing here knows a run: loaders produce items."""
