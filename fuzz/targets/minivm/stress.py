"""`walkfuzz stress --target minivm`: the live simulated VM (walkfuzz.targets.minivm.live.runner),
--mode signal|thread|queue; with --tx on every execnet gateway, the reports merged. Takes one
StressRequest (walkfuzz.targets.stress) and returns the exit status: 0 clean, 1 a fault, a
hang or an invalid trace (beyond --max-invalid-rate when that is given), 130 interrupted (the
report is written)."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from typing import Any

from walkfuzz.core.exit_status import INTERRUPTED
from walkfuzz.engine.progress import Progress
from walkfuzz.targets.minivm.live.gateways import stress_over_gateways
from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.reporting import write_stress_report
from walkfuzz.targets.minivm.live.runner import run_minivm_stress
from walkfuzz.targets.minivm.live.summary import one_line, status_key, status_line, verdict
from walkfuzz.targets.stress import StressRequest, raise_no_samples


def minivm_options(req: StressRequest) -> StressOptions:
    """The live stress run the request asks for, checked."""
    defaults = StressOptions()
    options = StressOptions(
        mode=req.mode or defaults.mode, interval_ns=req.interval_ns, threads=req.threads,
        duration_ns=req.duration_ns,
        baseline_ns=defaults.baseline_ns if req.baseline_ns is None else req.baseline_ns,
        workload=req.workload or defaults.workload, seed=req.seed, walker=req.walker,
        walk_budget_ns=req.walk_budget_ns or defaults.walk_budget_ns,
        max_walks=req.walks or 0, stop_on_first=req.stop_on_first,
        source=req.source or defaults.source)
    options.check()
    return options


def stress(req: StressRequest) -> int:
    """Run, report, and judge: 1 on a fault, a hang or an invalid trace beyond
    --max-invalid-rate, 130 interrupted. Findings are saved under the output directory as
    they happen. With --tx, the run happens on every gateway and the reports are merged."""
    options = minivm_options(req)
    out_dir = req.out_dir(options.mode)  # minivm's runs are told apart by mode
    if req.gateways:
        return stress_over_gateways(options, list(req.gateways), out_dir, req.command,
                                    req.max_invalid_rate)
    options = replace(options, out=str(out_dir))
    started = time.time()
    with Progress() as progress:
        def show(status: dict[str, Any]) -> None:
            progress.update(time.time() - started, status_line(status), status_key(status))

        result = run_minivm_stress(options, show)
    paths = write_stress_report(out_dir, result, req.command, started)
    total = result["total"]
    print(f"stress {options.label}: {one_line(result)}")
    if result["stopped_early"]:
        print("stopped at the first finding (--stop-on-first)")
    print(f"report: {paths['html']} (also {paths['json'].name}, {paths['md'].name})")
    if result.get("interrupted"):
        print("interrupted: the report has the samples walked until then", file=sys.stderr)
        return INTERRUPTED
    if total["walked"] == 0:
        raise_no_samples(options.duration_ns, options.interval_ns)
    return verdict(total, req.max_invalid_rate)
