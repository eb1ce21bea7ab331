"""Run the level-2 tools on a host through its transport, bounded in time and output size, and
judge them (active/judge.py). Absent tools are SKIPPED with the package that provides them."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from rocmprov.active import judge
from rocmprov.active.judge import ActiveResult
from rocmprov.active.rccl_tests import parse_rccl_tests
from rocmprov.active.rvs import parse_rvs, parse_rvs_summary
from rocmprov.active.transferbench import parse_transferbench
from rocmprov.model import Severity, worst
from rocmprov.transport.base import CommandResult, Transport

OUTPUT_CAP = 1 << 20  # bytes of a tool's output kept
TIME = {"rvs": 300, "transferbench": 120, "rccl-tests": 180}  # seconds each tool may run
# RVS ships its sample configurations under share/rocm-validation-suite/conf; gst_single runs a
# short GEMM stress on every GPU (RVS user guide, GST module).
RVS_CONFS = (
    "/opt/rocm/share/rocm-validation-suite/conf/gst_single.conf",
    "/opt/rocm/extras/share/rocm-validation-suite/conf/gst_single.conf",
)


@dataclass(frozen=True)
class ActiveReport:
    host: str
    product: str = ""
    results: tuple[ActiveResult, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> Severity:
        return worst([r.severity for r in self.results])

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "product": self.product,
            "severity": self.severity.value,
            "results": [r.to_dict() for r in self.results],
        }


def _find(transport: Transport, tool: str) -> str:
    """The first of the tool's binaries that exists on the host; "" when none does."""
    names = judge.thresholds()["tools"][tool]["binaries"]
    script = (
        "; ".join(f"command -v {shlex.quote(n)} 2>/dev/null && exit 0" for n in names)
        + "; exit 127"
    )
    res = transport.run(script, timeout=15)
    return res.stdout.strip().splitlines()[0] if res.rc == 0 and res.stdout.strip() else ""


def _bounded(binary: str, args: str, seconds: int) -> str:
    """The tool under timeout(1), its output capped; its exit status goes to stderr as
    `rocmprov-exit: N` (the pipe into head would hide it), so that a run killed at its time
    limit is never judged on the partial output it left."""
    run = f"timeout -k 10 {seconds} {shlex.quote(binary)} {args} 2>&1"
    return f'{{ {run}; echo "{EXIT_MARK} $?" >&2; }} | head -c {OUTPUT_CAP}'


EXIT_MARK = "rocmprov-exit:"
_KILLED = {124, 137}  # timeout(1): limit reached; 128+9: killed after the -k grace period


def _killed(tool: str, res: CommandResult, result: ActiveResult) -> ActiveResult:
    """UNKNOWN instead of a pass when the tool ran out of time (a failure it printed stands)."""
    codes = [
        int(line.split()[-1])
        for line in res.stderr.splitlines()
        if line.startswith(EXIT_MARK) and line.split()[-1].isdigit()
    ]
    if not codes or codes[-1] not in _KILLED or result.severity.rank > Severity.UNKNOWN.rank:
        return result
    return ActiveResult(
        tool,
        Severity.UNKNOWN,
        f"{tool} did not finish within {TIME[tool]} s and was stopped; its partial output is "
        "not a pass",
        actual=f"stopped at {TIME[tool]} s",
        expected="a complete run",
        ref=result.ref,
    )


def _product(transport: Transport) -> str:
    res = transport.run(
        "for f in /sys/class/drm/card[0-9]*/device/product_name; do "
        '[ -r "$f" ] && head -c 200 "$f" && echo; done 2>/dev/null | head -n 1; '
        "command -v rocminfo >/dev/null 2>&1 && timeout 60 rocminfo 2>/dev/null | "
        "grep -m1 'Marketing Name:.*Instinct' | sed 's/.*Marketing Name: *//'",
        timeout=75,
    )
    names = [line.strip() for line in res.stdout.splitlines() if line.strip()]
    return next((n for n in names if "Instinct" in n), names[0] if names else "")


def _gpu_count(transport: Transport) -> int:
    res = transport.run("ls /sys/bus/pci/drivers/amdgpu 2>/dev/null | grep -c ':'", timeout=15)
    try:
        return int(res.stdout.strip() or 0)
    except ValueError:
        return 0


def run_active(transport: Transport) -> ActiveReport:
    product = _product(transport)
    results = []
    rvs = _find(transport, "rvs")
    if not rvs:
        results.append(judge.absent("rvs"))
    else:
        conf = " ".join(shlex.quote(c) for c in RVS_CONFS)
        run_rvs = _bounded(rvs, '-c "$c"', TIME["rvs"])
        script = f'for c in {conf}; do [ -r "$c" ] || continue; {run_rvs}; exit 0; done; '
        script += "echo 'no gst_single.conf' >&2; exit 127"
        res = transport.run(script, timeout=TIME["rvs"] + 30)
        results.append(
            _killed(
                "rvs", res, judge.judge_rvs(parse_rvs(res.stdout), parse_rvs_summary(res.stdout))
            )
            if res.rc != 127
            else ActiveResult("rvs", Severity.UNKNOWN, "rvs found but no gst_single.conf")
        )
    tb = _find(transport, "transferbench")
    if not tb:
        results.append(judge.absent("transferbench"))
    else:
        res = transport.run(
            _bounded(tb, "p2p", TIME["transferbench"]), timeout=TIME["transferbench"] + 30
        )
        judged = judge.judge_transferbench(parse_transferbench(res.stdout), product)
        results.append(_killed("transferbench", res, judged))
    rccl = _find(transport, "rccl-tests")
    if not rccl:
        results.append(judge.absent("rccl-tests"))
    else:
        gpus = max(_gpu_count(transport), 1)
        args = f"-b 8M -e 1G -f 2 -g {gpus}"
        res = transport.run(
            _bounded(rccl, args, TIME["rccl-tests"]), timeout=TIME["rccl-tests"] + 30
        )
        results.append(
            _killed("rccl-tests", res, judge.judge_rccl(parse_rccl_tests(res.stdout), product))
        )
    return ActiveReport(transport.host, product, tuple(results))
