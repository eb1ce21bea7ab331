"""The heal run (commands/heal.py's work): Slurm state -> audit -> plan (gate/heal.py) -> fix
(apply by tag) -> re-audit -> verify -> resume, or escalate. Every step goes to the node's
journal first; one line per node on stderr."""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import replace
from typing import Any

from rocmprov.fleet.options import FleetOptions
from rocmprov.gate.heal import (
    RESTORING,
    Event,
    HealPolicy,
    NodePlan,
    Step,
    attempts,
    isolated_now,
    needs_human,
    plan_fleet,
    plan_node,
    remedy_table,
    repeats,
)
from rocmprov.gate.heal_io import Slurm, StateDir, run_hook, write_metrics
from rocmprov.gate.policy import DrainPolicy
from rocmprov.gate.slurm import NodeState, SlurmError, clean
from rocmprov.model import AuditResult, HostReport, Severity

_NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class Healer:
    def __init__(
        self,
        args: argparse.Namespace,
        policy: HealPolicy,
        drain: DrainPolicy,
        hook: list[str],
        cli_vars: dict,
        state: StateDir,
        fleet: FleetOptions,
    ) -> None:
        self.args, self.policy, self.drain, self.hook = args, policy, drain, hook
        self.fleet = fleet
        self.cli_vars, self.state = cli_vars, state
        self.results: list[dict[str, Any]] = []

    # --- the run ---------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]]:
        from rocmprov.fleet.fanout import _hosts

        hosts = _hosts(self.fleet, self.cli_vars)
        slurm_names = {h.name: _slurm_name(h) for h in hosts}
        self.slurm = Slurm(self._slurm_transport(hosts), self.args.scontrol)
        try:
            return self._run(hosts, slurm_names)
        finally:
            self.slurm.transport.close()

    def _run(self, hosts: list, slurm_names: dict[str, str]) -> list[dict[str, Any]]:
        from rocmprov.actions.repair import remedies
        from rocmprov.commands._heal_gres import gpu_map

        nodes: dict[str, tuple[NodeState, tuple[str, ...]]] = {}
        for host, name in slurm_names.items():
            try:
                nodes[host] = self.slurm.show(name)
            except SlurmError as exc:
                self._say(host, "unknown", f"not read from Slurm: {exc}")
        self.specs = {h.name: h for h in hosts}
        now = time.time()
        journals = {h: self.state.journal(n.name) for h, (n, _) in nodes.items()}
        isolated = {h: isolated_now(journals[h]) for h in nodes}
        drained = [
            h
            for h, (n, _) in nodes.items()
            if (n.touchable and n.drained and n.ours) or (isolated[h] and not n.drained)
        ]
        reports = self._audit(drained) if drained else {}
        table = remedy_table(remedies())
        plans = [
            plan_node(
                nodes[h][0],
                reports.get(h),
                journals[h],
                self.policy,
                table,
                now,
                self.drain,
                nodes[h][1],
                gpu_map(self.specs[h]),
                isolated[h],
            )
            for h in sorted(drained, key=lambda h: nodes[h][0].name)
        ]
        host_of = {nodes[h][0].name: h for h in drained}
        # every node's journal: a node rebooted and resumed earlier in the window still counts
        fleet = {**self.state.journals(), **{p.node: journals[host_of[p.node]] for p in plans}}
        plans = plan_fleet(plans, fleet, self.policy, now)
        for host in nodes:
            if host not in drained:
                self.results.append(_result(nodes[host][0].name, "left", "not drained by the gate"))
        for p in plans:
            if p.step is Step.LEAVE:
                self.results.append(_result(p.node, "left", p.why))
        fixing: list[tuple[str, NodePlan]] = []
        for p in plans:
            host = host_of[p.node]
            if p.step is Step.ESCALATE:
                self._escalate(
                    p, p.reason, p.why, attempts(journals[host], now, self.policy.window_s)
                )
            elif p.step is Step.DEFER:
                if not repeats(journals[host], "deferred", p.why):
                    self._log(p.node, "deferred", why=p.why)
                self._say(p.node, "deferred", p.why)
            elif p.step is Step.WAIT:
                self._say(p.node, "waiting", p.why)
            elif p.step in (Step.ISOLATE, Step.RESTORE):
                self._gres(host, p)
            elif p.step is not Step.LEAVE:
                fixing.append((host, p))
        self._fix_and_resume(fixing, journals)
        self._metrics()
        return self.results

    def _fix_and_resume(self, fixing: list[tuple[str, NodePlan]], journals: dict) -> None:
        if not fixing:
            return
        groups: dict[tuple[tuple[str, ...], bool], list[str]] = {}
        for host, p in fixing:
            if p.step is Step.FIX:
                groups.setdefault((p.tags, p.reboot), []).append(host)
        applied: dict[str, str] = {}
        for (tags, reboot), hosts in groups.items():
            names = [p.node for h, p in fixing if h in hosts]
            for _h, p in ((h, p) for h, p in fixing if h in hosts):
                self._log(p.node, "attempt", tags=list(tags), reboot=reboot, checks=list(p.checks))
            status = self._apply(hosts, tags, reboot) if not self.args.dry_run else "dry run"
            for h in hosts:
                applied[h] = status
            self._note(f"apply --tags {','.join(tags)} on {','.join(names)}: {status}")
        if self.args.dry_run:
            for _h, p in fixing:
                self._say(p.node, "planned", f"{p.step.value}: {p.why} (dry run)")
            return
        after = self._audit([h for h, _ in fixing])
        for host, p in fixing:
            self._verify_and_resume(host, p, after.get(host), applied.get(host, ""), journals[host])

    def _verify_and_resume(
        self, host: str, p: NodePlan, report: HostReport | None, applied: str, journal: list
    ) -> None:
        left = _critical(report, self.drain)
        if report is None or report.failure or left:
            what = ",".join(sorted({f.check for f in left})) or "the node could not be audited"
            self._log(p.node, "failed", checks=list(p.checks), still=what, apply=applied)
            tried = attempts(self.state.journal(p.node), time.time(), self.policy.window_s)
            if tried >= self.policy.max_attempts:
                reason = needs_human(
                    p.checks[0] if p.checks else what, f"{tried} repair attempts failed"
                )
                self._escalate(p, reason, f"still broken after {tried} attempt(s): {what}", tried)
            else:
                self._say(
                    p.node,
                    "failed",
                    f"still broken ({what}); attempt {tried} of "
                    f"{self.policy.max_attempts}, again next run",
                )
            return
        if p.verify == "smoke":
            ok, detail = self._smoke(host)
            if not ok:
                self._log(p.node, "failed", checks=list(p.checks), still=f"smoke: {detail}")
                self._say(p.node, "failed", f"audit clean, smoke test failed: {detail}")
                return
        self._log(p.node, "fixed", checks=list(p.checks), verify=p.verify)
        node, _ = self.slurm.show(p.node)
        if not (node.touchable and node.drained and node.ours):  # the admin took it meanwhile
            self._say(p.node, "left", f"fixed, but now {node.state} ({node.reason}): not resumed")
            return
        self.slurm.resume(p.node)
        self._log(p.node, "resumed", verify=p.verify)
        self._say(
            p.node,
            "resumed",
            f"{','.join(p.checks) or 'nothing left'} fixed, verified by {p.verify}: resumed",
        )

    def _escalate(self, p: NodePlan, reason: str, why: str, tried: int) -> None:
        if self.args.dry_run:
            self._say(p.node, "escalated", f"{why}: would drain with {reason} (dry run)")
            return
        node, _ = self.slurm.show(p.node)  # `state=drain` replaces the reason: never an admin's
        if not (node.touchable and node.drained and node.ours):
            self._say(p.node, "left", f"{why}, but now {node.state} ({node.reason}): left alone")
            return
        self.slurm.drain(p.node, reason)
        event = {
            "ts": round(time.time(), 3),
            "node": p.node,
            "event": "escalated",
            "reason": reason,
            "why": why,
            "checks": list(p.checks),
            "attempts": tried,
        }
        hook = ""
        if self.hook:
            res = run_hook(self.hook, event, self.args.hook_timeout)
            hook = f"rc={res.rc}" if res.rc is not None else res.error
            if res.error and res.rc is not None:
                hook += f" ({res.error})"
        self._log(p.node, "escalated", reason=reason, why=why, checks=list(p.checks), hook=hook)
        self._say(p.node, "escalated", f"{why}: {reason}" + (f" hook {hook}" if hook else ""))

    def _gres(self, host: str, p: NodePlan) -> None:
        """Take the bad GPUs out of Slurm's gres and resume with the rest (or put them back)."""
        from rocmprov.commands._heal_gres import change, gpu_map
        from rocmprov.gate.gres import GresError

        if self.args.dry_run:
            self._say(p.node, "planned", f"{p.step.value}: {p.why} (dry run)")
            return
        out = p.gpus if p.step is Step.ISOLATE else ()
        back = p.gpus if p.step is Step.RESTORE else ()
        same = self.args.slurm_host == host
        if back:  # in service: drained while the count changes, so no job starts meanwhile
            self.slurm.drain(p.node, RESTORING)
        try:
            node_t = self._transport(host)
            try:
                count = change(
                    node_t,
                    self.slurm.transport,
                    same,
                    p.node,
                    gpu_map(self.specs[host]),
                    out,
                    back,
                    scontrol=self.args.scontrol,
                )
            finally:
                node_t.close()
        except (GresError, OSError) as exc:
            if p.step is Step.ISOLATE:
                what = f"GPU isolation failed: {exc}"
                self._escalate(p, needs_human(p.checks[0], what), what, 0)
            else:
                self._say(p.node, "failed", f"could not put GPUs back: {exc}")
            return
        if p.step is Step.RESTORE:
            self._log(p.node, "restored", gpus=list(back), count=count)
            self._resume_if_ours(p.node, "restored", f"{', '.join(back)} back: gpu:{count}")
            return
        event = {
            "ts": round(time.time(), 3),
            "node": p.node,
            "event": "isolated",
            "gpus": list(out),
            "checks": list(p.checks),
            "count": count,
        }
        hook = ""
        if self.hook:
            res = run_hook(self.hook, event, self.args.hook_timeout)
            hook = f"rc={res.rc}" if res.rc is not None else res.error
        self._log(p.node, "isolated", gpus=list(out), checks=list(p.checks), count=count, hook=hook)
        why = f"{', '.join(out)} out of service ({','.join(p.checks)}), gpu:{count}"
        self._resume_if_ours(p.node, "isolated", why, gpus_left=count)

    def _resume_if_ours(self, node_name: str, done: str, why: str, **detail: Any) -> None:
        """Resume the node if the drain is still ours and say `done`; else say why not: `left`
        for an admin's drain meanwhile, `waiting` for a node slurmd has not registered again
        (the next run resumes it)."""
        node, _ = self.slurm.show(node_name)
        if node.touchable and node.drained and node.ours:  # not an admin's drain meanwhile
            self.slurm.resume(node_name)
            self._log(node_name, "resumed", **detail)
            self._say(node_name, done, f"{why}: resumed")
            return
        outcome = "left" if node.touchable else "waiting"
        self._say(node_name, outcome, f"{why}; now {node.state} ({node.reason}): not resumed")

    def _transport(self, host: str) -> Any:
        from rocmprov.fleet.fanout import ssh_files
        from rocmprov.transport.ssh import SSHOptions, SSHTransport

        spec = self.specs[host]
        known, config = ssh_files(self.fleet, [spec])
        options = SSHOptions.load(
            known_hosts=known, ssh_config=config, accept_new=self.fleet.accept_new
        )
        return SSHTransport.from_spec(spec, options)

    # --- I/O helpers -----------------------------------------------------------------------

    def _audit(self, hosts: list[str]) -> dict[str, HostReport]:
        from rocmprov.fleet.fanout import audit_inventory

        result: AuditResult = audit_inventory(
            replace(self.fleet, limit=",".join(hosts)), self.cli_vars
        )
        return {r.host: r for r in result.hosts}

    def _apply(self, hosts: list[str], tags: tuple[str, ...], reboot: bool) -> str:
        from rocmprov.provision.fallback import apply as run_apply
        from rocmprov.provision.runner import ApplyOptions

        extravars = {**self.cli_vars, **({"rocmprov_reboot": True} if reboot else {})}
        opts = ApplyOptions(
            inventory=str(self.args.inventory),
            limit=",".join(hosts),
            tags=",".join(tags),
            forks=self.args.forks,
            extravars=extravars,
        )
        result = run_apply(opts)
        if result.status == "canceled":
            raise KeyboardInterrupt
        return result.status

    def _smoke(self, host: str) -> tuple[bool, str]:
        from rocmprov.fleet.fanout import verify_inventory

        for rep in verify_inventory(replace(self.fleet, limit=host, python="")):
            ok = rep.severity is Severity.OK
            return ok, "passed" if ok else clean(rep.error or "a smoke test failed", 120)
        return False, "not run"

    def _slurm_transport(self, hosts: list) -> Any:
        if not self.args.slurm_host:
            from rocmprov.transport.local import LocalTransport

            return LocalTransport()
        from rocmprov.fleet.fanout import _hosts, ssh_files
        from rocmprov.transport.ssh import SSHOptions, SSHTransport

        only = replace(self.fleet, limit=self.args.slurm_host)
        specs = [h for h in _hosts(only, self.cli_vars) if h.name == self.args.slurm_host]
        if not specs:
            raise SlurmError(f"--slurm-host {self.args.slurm_host} is not in the inventory")
        known, config = ssh_files(self.fleet, specs)
        options = SSHOptions.load(
            known_hosts=known, ssh_config=config, accept_new=self.fleet.accept_new
        )
        return SSHTransport.from_spec(specs[0], options)

    def _log(self, node: str, event: str, **detail: Any) -> None:
        if not self.args.dry_run:
            self.state.append(Event(time.time(), node, event, detail))

    def _metrics(self) -> None:
        if self.args.metrics_dir is None or self.args.dry_run:
            return
        from rocmprov.gate.heal_metrics import render

        journals = {n: self.state.journal(n) for n in self.state.nodes()}
        try:
            write_metrics(
                self.args.metrics_dir, render(journals, time.time(), self.policy.window_s)
            )
        except OSError as exc:
            self._note(f"cannot write metrics to {self.args.metrics_dir}: {exc.strerror or exc}")

    def _say(self, node: str, outcome: str, why: str) -> None:
        self.results.append(_result(node, outcome, why))
        self._note(f"node={node} outcome={outcome} {why}")

    def _note(self, text: str) -> None:
        print("rocmprov heal: " + clean(text, 1000), file=sys.stderr, flush=True)


def _result(node: str, outcome: str, why: str) -> dict[str, Any]:
    return {"node": node, "outcome": outcome, "why": why}


def _critical(report: HostReport | None, drain: DrainPolicy) -> list:
    if report is None or report.failure:
        return []
    return [f for f in drain.select(report.findings) if f.severity is Severity.CRITICAL]


def _slurm_name(spec: Any) -> str:
    """hostvar rocmprov_slurm_node, else the inventory name's first label (not for an address)."""
    from rocmprov.exitcodes import UsageError

    name = str(spec.vars.get("rocmprov_slurm_node") or spec.name)
    name = name if name.replace(".", "").isdigit() else name.split(".")[0]
    if not _NODE_NAME.fullmatch(name):
        raise UsageError(f"{spec.name}: not a Slurm node name: {name!r} (rocmprov_slurm_node)")
    return name
