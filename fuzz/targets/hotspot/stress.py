"""`walkfuzz stress --target hotspot`: AsyncGetCallTrace sampled in a JVM
(walkfuzz.targets.hotspot.runs), --jdk 17|25|PATH. Takes one StressRequest and returns the
exit status: 0 clean, 1 a fault, a hang, a dead JVM or an invalid trace (beyond
--max-invalid-rate when that is given), 130 interrupted."""

from __future__ import annotations

from walkfuzz.targets.stress import NS_PER_S, StressRequest


def stress(req: StressRequest) -> int:
    from walkfuzz.targets.hotspot.runs import interval_us, stress_and_judge

    return stress_and_judge(req.out_dir(), jdk=req.jdk,
                            duration_s=req.duration_ns / NS_PER_S, seed=req.seed,
                            threads=req.threads, interval_us=interval_us(req.interval_ns),
                            max_invalid_rate=req.max_invalid_rate,
                            debug_non_safepoints=req.debug_non_safepoints, argv=req.command)
