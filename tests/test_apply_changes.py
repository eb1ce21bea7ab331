"""What `rocmprov apply --check --diff` shows per host (issue 12: check mode must show every
source, key and pin). The end-to-end proof is tests/test_releases_lab.py's check-mode test on a
real host; here the event shapes of ansible-core's copy, file and loop results."""

from __future__ import annotations

from rocmprov.provision.events import EventCollector, describe_change


def copy_result(path: str, before: str, after: str) -> dict[str, object]:
    return {"changed": True, "diff": [{"before": before, "after": after,
            "before_header": path, "after_header": path}]}  # fmt: skip


def test_a_file_diff_is_a_unified_diff_with_the_new_lines() -> None:
    text = describe_change("Pin", copy_result("/etc/apt/preferences.d/p", "", "Pin: release o=x\n"))
    assert text.splitlines()[0] == "Pin"
    assert "+++ /etc/apt/preferences.d/p" in text
    assert "+Pin: release o=x" in text


def test_a_loop_shows_each_changed_item_only() -> None:
    res = {
        "changed": True,
        "msg": "All items completed",
        "results": [
            {**copy_result("/s/rocm.sources", "", "URIs: http://a/rocm\n"), "item": "rocm"},
            {"changed": False, "item": "amdgpu"},
        ],
    }
    text = describe_change("sources", res)
    assert "item rocm" in text and "+URIs: http://a/rocm" in text
    assert "amdgpu" not in text and "All items completed" not in text


def test_secrets_in_a_diff_are_scrubbed_and_size_is_bounded() -> None:
    res = copy_result("/etc/x", "", "URIs: https://user:s3cr3tT0ken@mirror/rocm\n" + "x\n" * 5000)
    text = describe_change("mirror", res)
    assert "s3cr3tT0ken" not in text
    assert len(text) < 4100 and text.endswith("(cut)")


def test_the_collector_keeps_changes_per_host_in_the_result() -> None:
    col = EventCollector()
    fetch = {"changed": True, "msg": "would fetch https://k to /etc/k.asc"}
    col.handle({"event": "runner_on_ok",
                "event_data": {"host": "h1", "task": "key", "res": fetch}})  # fmt: skip
    col.handle({"event": "runner_on_ok", "event_data": {"host": "h1", "task": "noop",
                "res": {"changed": False}}})  # fmt: skip
    (host,) = col.results()
    assert host.changes == ("key\n  would fetch https://k to /etc/k.asc",)
    assert host.to_dict()["changes"] == list(host.changes)
