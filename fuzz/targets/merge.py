"""`walkfuzz merge DIR... --out DIR`: output folders of one kind from many machines made one
folder of that kind, which the report, `walkfuzz triage`, `replay` and a resumed `walkfuzz
fuzz --out` read as if one run had written it.

    campaign folders (campaign.json)   corpora through libFuzzer's -merge=1
                                       (walkfuzz.engine.corpus_merge), findings copied and
                                       their hits merged (walkfuzz.findings.merge), sessions
                                       kept, the report written by the campaign's own code
    run reports (report.json: stress)  summed, with a breakdown per host
                                       (walkfuzz.report.merge), findings copied

Inputs must be of one kind and one target (a campaign: harness and walker too; a run: run
type, mode and walker); anything else is refused with one line naming the two folders.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_dir
from walkfuzz.engine.campaign import (
    CAMPAIGN_FILE,
    IDENTITY,
    CampaignDir,
    CampaignSpec,
    Sample,
    Session,
    build_report,
)
from walkfuzz.engine.corpus import entries
from walkfuzz.engine.corpus_merge import MergedCorpus, MergeHarness, merge_corpora
from walkfuzz.engine.run_report import write_run_report
from walkfuzz.findings.hits import write_hits
from walkfuzz.findings.merge import copy_findings, merged_hits, rebased_all
from walkfuzz.findings.store import write_atomic
from walkfuzz.report.document import CAMPAIGN_SECONDS, RunReport, host_label
from walkfuzz.report.files import REPORT_STEM, load_report
from walkfuzz.report.merge import HOST_PREFIX, add_row, host_rows, merge_reports, relocator
from walkfuzz.targets.table import default_out, find_harness, run_label

CAMPAIGN = "campaign"
RUN_IDENTITY = ("run_type", "target", "mode", "walker")


@dataclass
class MergeResult:
    kind: str  # "campaign", or the run type of the reports ("stress", ...)
    out: Path
    inputs: int
    signatures: int
    stored_inputs: int  # finding inputs copied (one file per input however often it was seen)
    report: dict[str, Path] = field(default_factory=dict)
    corpus: MergedCorpus | None = None


def kind_of(path: Path) -> str:
    """What output folder `path` is: CAMPAIGN, or the run type its report names; UserError
    naming it when it is none."""
    if not path.exists():
        raise UserError(f"{str(path)!r} does not exist")
    if not path.is_dir():
        raise UserError(f"{str(path)!r} is a file, not a walkfuzz output folder")
    if (path / CAMPAIGN_FILE).is_file():
        return CAMPAIGN
    if (path / f"{REPORT_STEM}.json").is_file():
        return _report(path).meta.run_type
    raise UserError(f"{str(path)!r} is no walkfuzz output folder (it has neither "
                    f"{CAMPAIGN_FILE} nor {REPORT_STEM}.json)")


def _report(path: Path) -> RunReport:
    file = path / f"{REPORT_STEM}.json"
    try:
        return load_report(file)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UserError(f"{str(file)!r} is no readable run report: {err}") from None


def check_out(inputs: Sequence[Path], out: Path) -> Path:
    """--out checked and created before any work: writable, none of the inputs, empty if it
    exists."""
    output_dir(out)
    for path in inputs:
        if path.exists() and path.resolve() == out.resolve():
            raise UserError(f"--out {str(out)!r} is one of the folders to merge; "
                            "name a new folder")
    if out.is_dir() and any(out.iterdir()):
        raise UserError(f"--out {str(out)!r} is not empty; name a new folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"--out {str(out)!r} cannot be created: {err.strerror}") from None
    return out


@contextlib.contextmanager
def _new_out(inputs: Sequence[Path], out: Path) -> Iterator[Path]:
    """--out checked and created (check_out) for a merge that, if it fails or is interrupted,
    leaves it as it was, new or empty: a retry into it is not refused as "not empty"."""
    existed = out.is_dir()
    check_out(inputs, out)
    try:
        yield out
    except BaseException:
        for path in out.iterdir() if existed else ():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        if not existed:
            shutil.rmtree(out, ignore_errors=True)
        raise


def _same(inputs: Sequence[Path], keys: Sequence[str], values: Sequence[dict[str, object]],
          what: str) -> None:
    for key in keys:
        for path, doc in zip(inputs[1:], values[1:], strict=True):
            if doc.get(key) != values[0].get(key):
                raise UserError(f"cannot merge {str(inputs[0])!r} ({what} {key} "
                                f"{values[0].get(key)!r}) with {str(path)!r} ({key} "
                                f"{doc.get(key)!r}): merge folders of one {key}")


def merge_outputs(inputs: Sequence[Path], out: Path | None,
                  command: list[str]) -> MergeResult:
    """Merge `inputs` into the new folder `out` (checked first; None: reports/merge-LABEL,
    the one rule of walkfuzz.targets.table.default_out); UserError on bad input."""
    seen: set[Path] = set()
    for path in inputs:
        if path.resolve() in seen:
            raise UserError(f"{str(path)!r} is given twice")
        seen.add(path.resolve())
    kinds = [kind_of(p) for p in inputs]
    for path, kind in zip(inputs[1:], kinds[1:], strict=True):
        if kind != kinds[0]:
            raise UserError(f"cannot merge {str(inputs[0])!r} (a {kinds[0]} folder) with "
                            f"{str(path)!r} (a {kind} folder): merge folders of one kind")
    if kinds[0] == CAMPAIGN:
        loaded = [CampaignDir(p).load() for p in inputs]
        spec = loaded[0][0]
        _same(inputs, IDENTITY, [s for s, _ in loaded], "a campaign of")
        harness = _harness(inputs[0], spec)
        with _new_out(inputs, out or _default_out(str(spec.get("target")),
                                                  str(spec.get("harness")))) as new:
            return merge_campaigns(inputs, new, command, harness, loaded)
    reports = [_report(p) for p in inputs]
    _same(inputs, RUN_IDENTITY, [vars(r.meta) for r in reports], "a run of")
    meta = reports[0].meta
    with _new_out(inputs, out or _default_out(meta.target, meta.mode)) as new:
        return merge_runs(inputs, new, command, reports)


def _default_out(target: str, label: str) -> Path:
    """reports/merge-LABEL: minivm's folders are told apart by harness or mode, the other
    targets' by target (as the inputs' own default folders are)."""
    return default_out("merge", target, run_label(target, label))


def merge_runs(inputs: Sequence[Path], out: Path, command: list[str],
               reports: Sequence[RunReport]) -> MergeResult:
    stored = sum(copy_findings(p, out) for p in inputs)
    merged = merge_reports(reports, command, relocator(inputs, out))
    return MergeResult(merged.meta.run_type, out, len(inputs), len(merged.findings), stored,
                       write_run_report(out, merged))


def merge_campaigns(inputs: Sequence[Path], out: Path, command: list[str],
                    harness: MergeHarness,
                    loaded: Sequence[tuple[dict[str, object], list[Session]]]) -> MergeResult:
    dirs = [CampaignDir(p) for p in inputs]
    specs = [spec for spec, _ in loaded]
    merged = CampaignDir(out)
    for directory in (merged.findings, merged.workers):
        directory.mkdir(parents=True, exist_ok=True)
    corpus = merge_corpora(harness, [d.corpus for d in dirs if d.corpus.is_dir()],
                           merged.corpus)
    stored = sum(copy_findings(p, out) for p in inputs)
    _copy_quarantine(dirs, merged)
    sessions = sorted((s for _, ss in loaded for s in ss), key=lambda s: s.started_at)
    since = sessions[0].started_at if sessions else time.time()
    write_hits(out, rebased_all(merged_hits(inputs), since))
    fields = {**specs[0], "script": str(harness.script), "command": command,
              "jobs": sum(int(str(s.get("jobs", 1))) for s in specs)}
    try:
        spec = CampaignSpec(**fields)  # type: ignore[arg-type]
    except TypeError as err:  # a campaign.json of another walkfuzz version
        raise UserError(f"{str(dirs[0].campaign_file)!r}: unreadable spec: {err}") from None
    merged.save(spec, sessions)
    lasts = [samples[-1] for samples in (d.samples() for d in dirs) if samples]
    summed = round(sum(_campaign_seconds(d) for d in dirs), 3)
    merged.append_sample(_final_sample(lasts, corpus, merged, summed))
    report = build_report(merged, spec, sessions or [Session(since, time.time())],
                          [f"merged from {len(inputs)} campaigns: {', '.join(map(str, inputs))}"
                           f"; corpus through libFuzzer -merge=1"])
    report.counters.update({CAMPAIGN_SECONDS: summed, **_campaign_hosts(dirs)})
    paths = write_run_report(out, report)
    return MergeResult(CAMPAIGN, out, len(inputs), len(report.findings), stored, paths, corpus)


def _copy_quarantine(dirs: Sequence[CampaignDir], merged: CampaignDir) -> None:
    """Corpus entries that killed a worker on any machine stay out of the merged corpus's
    campaign when it resumes: kept in its quarantine/ (named by SHA-1, so one file each)."""
    for d in dirs:
        for path in entries(d.quarantine) if d.quarantine.is_dir() else ():
            merged.quarantine.mkdir(exist_ok=True)
            if not (merged.quarantine / path.name).exists():
                write_atomic(merged.quarantine / path.name, path.read_bytes())


def _harness(path: Path, spec: dict[str, object]) -> MergeHarness:
    """The harness the campaigns ran: their script where it is on this machine, else the
    harness of that name here."""
    target, name = str(spec.get("target")), str(spec.get("harness"))
    script = Path(str(spec.get("script", "")))
    if not script.is_file():
        script = find_harness(target, name).script
    walker = str(spec.get("walker") or "reference")
    if walker != "reference" and not Path(walker).is_file():
        raise UserError(f"{str(path)!r} was fuzzed with walker {walker!r}, which is not on "
                        "this machine: its corpus cannot run again for the merge")
    native = str(spec.get("native", "cov"))
    return MergeHarness(script, target, walker, native,  # type: ignore[arg-type]
                        int(str(spec.get("max_len", 4096))))


def _campaign_seconds(d: CampaignDir) -> float:
    """The fuzzing time a campaign brings to the sum: a merged campaign's own sum, else its
    clock at its last sample."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        carried = load_report(d.root / f"{REPORT_STEM}.json").counters.get(CAMPAIGN_SECONDS)
        if isinstance(carried, int | float):
            return float(carried)
    samples = d.samples()
    return samples[-1].t if samples else 0.0


def _final_sample(lasts: Sequence[Sample], corpus: MergedCorpus, out: CampaignDir,
                  campaign_seconds: float) -> Sample:
    """One sample of the merged campaign: inputs run on every machine, the merged corpus's
    coverage, the signatures found. Its clock is the longest campaign's (the campaigns ran
    side by side), its rate the inputs over the campaigns' summed time: the inputs of all
    over the longest one's time would credit one campaign with the others' work."""
    execs = sum(s.execs for s in lasts)
    return Sample(t=max((s.t for s in lasts), default=0.0), wall=time.time(), execs=execs,
                  exec_per_sec=round(execs / campaign_seconds, 1) if campaign_seconds else 0.0,
                  coverage=corpus.edges, features=corpus.features, corpus=corpus.files,
                  findings=sum(out.signatures_by_kind().values()))


def _campaign_hosts(dirs: Sequence[CampaignDir]) -> dict[str, dict[str, int | float | str]]:
    """Per host (its report's label; a campaign without a report: its folder's name): the
    campaigns, inputs run, corpus and signatures each brought; a campaign merged before
    brings its hosts' rows."""
    hosts: dict[str, dict[str, int | float | str]] = {}
    for d in dirs:
        label, carried = d.root.name, {}
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            report = load_report(d.root / f"{REPORT_STEM}.json")
            label, carried = host_label(report.meta.host), host_rows(report)
        for name, row in carried.items():
            add_row(hosts, name, row)
        if carried:
            continue
        samples = d.samples()
        add_row(hosts, f"{HOST_PREFIX}{label}", {
            "campaigns": 1, "execs": samples[-1].execs if samples else 0,
            "corpus": len(entries(d.corpus)) if d.corpus.is_dir() else 0,
            "signatures": sum(d.signatures_by_kind().values())})
    return hosts
