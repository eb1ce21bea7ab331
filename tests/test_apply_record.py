"""The run record holds what docs/apply.md and docs/security.md say it holds (a real local run,
the default strategy): the files of artifacts/run/ and which events job_events/ keeps."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from rocmprov.provision.runner import ApplyOptions, run_apply
from tests.test_apply_secrets import local_inventory, project

DOCS = Path(__file__).resolve().parents[1] / "docs"

TASKS = (
    "    - name: an ok task\n"
    "      ansible.builtin.command: 'true'\n"
    "      changed_when: false\n"
    "    - name: a skipped task\n"
    "      ansible.builtin.command: 'true'\n"
    "      when: false\n"
    "    - name: a loop with a skipped item\n"
    "      ansible.builtin.debug:\n"
    "        msg: '{{ item }}'\n"
    "      loop: [1, 2]\n"
    "      when: item == 1\n"
)


def _record(tmp_path: Path) -> Path:
    res = run_apply(
        ApplyOptions(
            inventory=str(local_inventory(tmp_path)),
            playbook_dir=str(project(tmp_path, TASKS)),
            state_dir=str(tmp_path / "runs"),
        )
    )
    assert res.status == "successful", res
    return Path(res.run_dir) / "artifacts" / "run"


def _paragraph(doc: str, start: str) -> str:
    text = (DOCS / doc).read_text()
    i = text.index(start)
    return text[i : text.find("\n\n", i)]


def test_the_record_files_are_the_documented_ones(tmp_path: Path) -> None:
    art = _record(tmp_path)
    there = {p.name for p in art.iterdir()}
    listed = re.search(r"artifacts/run/\{([^}]*)\}", (DOCS / "security.md").read_text())
    assert listed, "docs/security.md lists the files of artifacts/run/"
    documented = {n.split("/")[0] for n in listed.group(1).split(",")}
    assert documented == there
    apply_md = _paragraph("apply.md", "Each run gets a fresh directory")
    for name in there:
        assert name in apply_md, f"docs/apply.md does not name artifacts/run/{name}"


def test_job_events_keep_what_the_docs_say(tmp_path: Path) -> None:
    kinds = Counter(
        json.loads(p.read_text())["event"] for p in (_record(tmp_path) / "job_events").iterdir()
    )
    para = _paragraph("apply.md", "What the run directory keeps:")
    named = set(re.findall(r"`((?:runner|playbook)_[a-z_]+)`", para))
    dropped = {n for n in named if n.startswith("runner_")}
    assert {"runner_on_start", "runner_on_skipped", "runner_item_on_skipped"} <= dropped, para
    assert not dropped & set(kinds), kinds
    # what the paragraph says is still kept is there: one task start per task, the results
    kept = named - dropped
    assert "playbook_on_task_start" in kept, para
    assert kinds["playbook_on_task_start"] == 3, kinds
    assert kinds["runner_on_ok"] >= 1 and kinds["runner_item_on_ok"] == 1, kinds
