"""`walkfuzz coverage`: which harness replays a folder (`inputs`), the replays on the
source-coverage build and their union (`run`), llvm-profdata and llvm-cov (`llvm`), and the
printed table (`table`)."""
