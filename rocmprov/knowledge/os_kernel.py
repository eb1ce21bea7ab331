"""Which OS releases and kernel series a ROCm release supports (support_matrix.yaml): pure
lookups that return a Verdict and never raise on bad input."""

from __future__ import annotations

from typing import Any

from rocmprov.knowledge.matrix import (
    OK,
    UNKNOWN,
    WARNING,
    Verdict,
    _gfx,
    _kernel_series,
    _norm,
    _os_label,
    _release_entry,
    _unknown_release,
    _version_matches,
    parse_release,
)


def _os_entry(release: dict[str, Any], os_id: object, version_id: object) -> dict[str, Any] | None:
    for entry in release.get("os", []):
        if _norm(entry.get("id")) == _norm(os_id) and _version_matches(
            str(entry.get("version")), str(version_id)
        ):
            return entry
    return None


def os_verdict(rocm: str, os_id: str, version_id: str, *, gfx: str | None = None) -> Verdict:
    """Is this OS (os-release ID and VERSION_ID) supported by this ROCm release?

    ok when AMD lists it; warning when it is not listed (it may still work, AMD does not
    validate it), listed only from a later point release, or listed only for other GPUs (pass
    ``gfx`` to check that; without it a GPU restriction is a warning); unknown when the release
    is not in the data.
    """
    v, release = _release_entry(rocm)
    if release is None or v is None:
        return _unknown_release(rocm, v, "operating system")
    source = str(release.get("source", ""))
    listed = [_os_label(e) for e in release.get("os", [])]
    actual = f"{os_id} {version_id}"
    if not listed:
        return Verdict(
            UNKNOWN,
            actual,
            "",
            f"no verified OS list for ROCm {release['rocm']}: {release.get('why', '')}".strip(),
            source,
        )
    expected = "; ".join(listed)
    entry = _os_entry(release, os_id, version_id)
    if entry is None:
        return Verdict(
            WARNING,
            actual,
            expected,
            f"{actual} is not in AMD's supported OS list for ROCm {release['rocm']} "
            f"(as of {release.get('as_of')})",
            source,
        )
    source = str(entry.get("source", source))
    since = parse_release(str(entry.get("since", "")))
    if since is not None and v < since:
        return Verdict(
            WARNING,
            actual,
            f"ROCm >= {entry['since']} for {_os_label(entry)}",
            f"AMD lists {_os_label(entry)} only from ROCm {entry['since']}",
            source,
        )
    only = entry.get("only")
    if only:
        products = ", ".join(only.get("products", []))
        note = f" ({only['note']})" if only.get("note") else ""
        want = [str(g).lower() for g in only.get("gfx", [])]
        gfx_norm = _gfx(gfx)
        if not gfx_norm:
            return Verdict(
                WARNING,
                actual,
                f"{_os_label(entry)} on {products}",
                f"ROCm {release['rocm']} supports {_os_label(entry)} only on {products}{note}",
                source,
            )
        if gfx_norm not in want:
            return Verdict(
                WARNING,
                f"{actual} with {gfx_norm}",
                f"{_os_label(entry)} on {products}",
                f"ROCm {release['rocm']} supports {_os_label(entry)} only on {products}{note}",
                source,
            )
        return Verdict(
            OK,
            f"{actual} with {gfx_norm}",
            f"{_os_label(entry)} on {products}",
            f"supported by ROCm {release['rocm']} on {products}{note}",
            source,
        )
    return Verdict(OK, actual, _os_label(entry), f"supported by ROCm {release['rocm']}", source)


def kernel_verdict(rocm: str, os_id: str, version_id: str, kernel_release: str) -> Verdict:
    """Is the running kernel one of the series AMD lists for this OS under this ROCm release?

    ok when its major.minor is listed (GA or HWE), warning when it is not, unknown when the
    release, the OS or the kernel list is not in the data or the kernel string does not parse.
    """
    v, release = _release_entry(rocm)
    if release is None or v is None:
        return _unknown_release(rocm, v, "kernel")
    actual = str(kernel_release)
    series = _kernel_series(kernel_release)
    if series is None:
        return Verdict(UNKNOWN, actual, "", "cannot parse the kernel release", "")
    entry = _os_entry(release, os_id, version_id)
    if entry is None:
        return Verdict(
            UNKNOWN,
            actual,
            "",
            f"{os_id} {version_id} is not a supported OS for ROCm {release['rocm']}, "
            "so AMD lists no kernel for it",
            str(release.get("source", "")),
        )
    kernels = [str(k) for k in entry.get("kernels", [])]
    source = str(entry.get("kernels_source", entry.get("source", "")))
    if not kernels:
        return Verdict(
            UNKNOWN,
            actual,
            "",
            f"rocmprov has no kernel list for {_os_label(entry)} under ROCm {release['rocm']}",
            str(entry.get("source", "")),
        )
    expected = ", ".join(kernels)
    if series in kernels:
        return Verdict(
            OK, actual, expected, f"kernel {series} is listed for {_os_label(entry)}", source
        )
    return Verdict(
        WARNING,
        actual,
        expected,
        f"kernel {series} is not among the kernels AMD lists for {_os_label(entry)} "
        f"under ROCm {release['rocm']}",
        source,
    )
