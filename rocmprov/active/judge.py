"""Parsed tool outputs -> verdicts against rocmprov/data/active_thresholds.yaml. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from rocmprov.active.rccl_tests import RcclRun
from rocmprov.active.rvs import RvsResult
from rocmprov.active.transferbench import TransferBenchRun
from rocmprov.model import Severity


@dataclass(frozen=True)
class ActiveResult:
    tool: str  # rvs | transferbench | rccl-tests
    severity: Severity
    summary: str
    actual: str = ""
    expected: str = ""
    ref: str = ""
    package: str = ""  # the package that provides the tool (named when it is absent)

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__ | {"severity": self.severity.value}


@cache
def thresholds() -> dict[str, Any]:
    text = resources.files("rocmprov.data").joinpath("active_thresholds.yaml").read_text("utf-8")
    return yaml.safe_load(text)


def product_figures(product: str) -> dict[str, Any]:
    """The published figures of the product whose name the given one contains (or {})."""
    for name, figures in thresholds()["products"].items():
        if name.lower() in (product or "").lower():
            return figures
    return {}


def absent(tool: str) -> ActiveResult:
    t = thresholds()["tools"][tool]
    note = f" ({t['note']})" if t.get("note") else ""
    return ActiveResult(
        tool,
        Severity.SKIPPED,
        f"{tool} is not installed; package {t['package']}{note}",
        actual="absent",
        ref=t["source"],
        package=t["package"],
    )


def judge_rvs(results: list[RvsResult], summary: dict[str, str]) -> ActiveResult:
    src = thresholds()["tools"]["rvs"]["source"]
    failed = [r for r in results if not r.passed]
    failed_actions = sorted(a for a, v in summary.items() if v == "FAIL")
    if not results and not summary:
        return ActiveResult("rvs", Severity.UNKNOWN, "rvs printed no result line", ref=src)
    if failed or failed_actions:
        what = ", ".join(
            sorted({f"{r.action} GPU {r.gpu}".strip() for r in failed}) + failed_actions
        )
        return ActiveResult(
            "rvs", Severity.CRITICAL, f"RVS failed: {what}", actual=what, expected="pass", ref=src
        )
    return ActiveResult(
        "rvs",
        Severity.OK,
        f"RVS: {len(results)} result(s) passed",
        actual="pass",
        expected="pass",
        ref=src,
    )


def judge_rccl(run: RcclRun, product: str = "") -> ActiveResult:
    src = thresholds()["tools"]["rccl-tests"]["source"]
    if not run.rows:
        return ActiveResult(
            "rccl-tests", Severity.UNKNOWN, "all_reduce_perf printed no row", ref=src
        )
    if run.wrong or run.out_of_bounds:
        return ActiveResult(
            "rccl-tests",
            Severity.CRITICAL,
            f"all_reduce_perf: {run.wrong or run.out_of_bounds} wrong result(s)",
            actual=str(run.wrong or run.out_of_bounds),
            expected="0",
            ref=src,
        )
    busbw = run.max_busbw or 0.0
    figures = product_figures(product or run.product)
    target = figures.get("rccl_allreduce_busbw_gbps")
    if not target or run.ranks not in (0, 8):
        return ActiveResult(
            "rccl-tests",
            Severity.OK,
            f"all_reduce_perf: peak bus bandwidth {busbw:g} GB/s (no published figure to judge)",
            actual=f"{busbw:g} GB/s",
            ref=src,
        )
    floor = target * float(thresholds()["min_fraction"])
    low = busbw < floor
    return ActiveResult(
        "rccl-tests",
        Severity.WARNING if low else Severity.OK,
        f"all_reduce_perf: peak bus bandwidth {busbw:g} GB/s on {run.ranks or '?'} GPUs",
        actual=f"{busbw:g} GB/s",
        expected=f">= {floor:g} GB/s ({thresholds()['min_fraction']} x {target} GB/s)",
        ref=figures["rccl_source"],
    )


def judge_transferbench(run: TransferBenchRun, product: str = "") -> ActiveResult:
    src = thresholds()["tools"]["transferbench"]["source"]
    figures = product_figures(product)
    gpu_pairs = [
        c
        for c in run.cells
        if c.src.startswith("GPU") and c.dst.startswith("GPU") and c.src != c.dst
    ]
    host = [c for c in run.cells if c.src.startswith("CPU") != c.dst.startswith("CPU")]
    if not run.cells and not run.transfers:
        return ActiveResult(
            "transferbench", Severity.UNKNOWN, "TransferBench printed no bandwidth", ref=src
        )
    frac = float(thresholds()["min_fraction"])
    slow = []
    if figures.get("xgmi_link_gbps"):
        floor = figures["xgmi_link_gbps"] * frac
        slow += [f"{c.src}->{c.dst} {c.gbps:g}" for c in gpu_pairs if c.gbps < floor]
    if figures.get("pcie_gbps"):
        floor = figures["pcie_gbps"] * frac
        slow += [f"{c.src}->{c.dst} {c.gbps:g}" for c in host if c.gbps < floor]
    best = max([c.gbps for c in run.cells] + [t.gbps for t in run.transfers], default=0.0)
    if not figures:
        return ActiveResult(
            "transferbench",
            Severity.OK,
            f"TransferBench: best {best:g} GB/s (no published figure for this product)",
            actual=f"{best:g} GB/s",
            ref=src,
        )
    return ActiveResult(
        "transferbench",
        Severity.WARNING if slow else Severity.OK,
        "TransferBench: "
        + (
            f"below half the published link rate: {', '.join(slow)} GB/s"
            if slow
            else f"every link >= {frac} x the published rate"
        ),
        actual=", ".join(slow) or f"best {best:g} GB/s",
        expected=f"GPU-GPU >= {frac} x {figures.get('xgmi_link_gbps')} GB/s, "
        f"CPU-GPU >= {frac} x {figures.get('pcie_gbps')} GB/s",
        ref=figures.get("xgmi_source", src),
    )
