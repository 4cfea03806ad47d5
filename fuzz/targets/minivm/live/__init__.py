"""Live stress of walkers: sampled worker threads, each trace checked against ground truth.

`walkfuzz stress --target minivm` runs the live simulated VM (native/src/live_*.c): worker
threads execute interpreted, compiled (with inlining), native-wrapper, stub and entry frames,
a sampler stops them every interval, the walker walks, and each trace is compared with the
thread's shadow stack. Modules:

  options   what to run (mode, interval, threads, duration, workload) and parsing of durations
  live      the run itself, in the process that calls it (one per process)
  child     `python -m walkfuzz.targets.minivm.live.child`: the run in a child process, JSON out
  runner    `run_minivm_stress`: start the child, read its result
  summary   figures of a result: rates per second and per CPU-second, percentiles, slowdown
  reporting findings and the run report (walkfuzz.report.document) of a result
  targets   `--target` dispatch (minivm here; hotspot and libunwind have their own runners)
"""
