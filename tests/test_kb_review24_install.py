"""Review of session 24's install/toolchain entries (apt, pacman, compiler, releases): each
test is a defect found by a hostile read, failing before its fix."""

from __future__ import annotations

import re
from pathlib import Path

from rocmprov.kb import load_table, match

WORDINGS = Path(__file__).resolve().parent / "fixtures" / "kb-wordings"


def _first(text: str) -> str | None:
    found = [m for m in match(text) if not m.harmless]
    return found[0].id if found else None


def _ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


def _fix(text: str, entry_id: str) -> str:
    return next(m for m in match(text) if m.id == entry_id).fix


def test_yay_dependency_starts_at_a_word() -> None:
    """procps-ng read as "rocps-ng" and chip-tool as "hip-tool": not ROCm dependencies."""
    entry = "apt.pacman-rocm-dependency-renamed"
    head = " -> Could not find all required packages:\n"
    assert entry not in _ids(head + "\tprocps-ng>=4.0 (Wanted by: htop-vim)\n")
    assert entry not in _ids(head + "\tchip-tool>=1.0 (Wanted by: matter-bridge)\n")
    found = match(head + "    hip>=3.3.0 (Wanted by: rocm-libs -> hipsparse)\n")
    assert found[0].id == entry and found[0].captures["dep"] == "hip>=3.3.0"


def test_clearsigned_url_has_no_open_ended_run_before_a_literal() -> None:
    """`https?://\\S{1,512}?)/dists/\\S+ {1,2}` backtracked quadratically on a line of many
    URLs (1,000 crafted lines: minutes). The URL is now made of "/"-free segments, and the
    suite of one, so no unbounded \\S stands before a literal."""
    entry = load_table().by_id["apt.clearsigned-nosplit-not-a-release-file"]
    (pattern,) = entry.patterns
    assert not re.search(r"\\S[+*{]", pattern.compiled.pattern)
    line = "http://x/dists/" * 260 + " Clearsigned file isn't valid, got 'NOSPLIT'"
    assert _first(line) == entry.id
    found = match(
        "E: Failed to fetch https://h.example.org/a/b/dists/jammy/InRelease  Clearsigned file"
        " isn't valid, got 'NOSPLIT' (does the network require authentication?)\n"
    )
    assert found[0].captures["url"] == "https://h.example.org/a/b"


def test_torch_extension_on_wheels_answers_before_the_generic_headers_entry() -> None:
    wheel = "compiler.torch-extension-rocm-sdk-headers-not-found"
    generic = "compiler.rocm-library-dev-headers-not-found"
    site = "/home/u/venv/lib/python3.12/site-packages/torch/include/ATen/hip"
    hipblas = (
        f"{site}/HIPContextLight.h:8:10: fatal error: hipblas/hipblas.h:"
        " No such file or directory\n"
    )
    hipcub = f"{site}/cub.h:12:10: fatal error: 'hipcub/hipcub.hpp' file not found\n"
    # a TheRock marker (review 25A: site-packages alone is in every pip extension build)
    hipcc = "/home/u/venv/lib/python3.12/site-packages/_rocm_sdk_core/bin/hipcc -c ext.hip\n"
    assert _first(hipcc + hipblas) == wheel and _first(hipcc + hipcub) == wheel
    assert _first("x.cpp:1:10: fatal error: 'roctracer/roctx.h' file not found\n") == generic


def test_linux_firmware_split_only_for_the_nvidia_package() -> None:
    entry = "apt.pacman-linux-firmware-split-conflict"
    head = "error: failed to commit transaction (conflicting files)\n"
    amd = (
        "linux-firmware-amdgpu: /usr/lib/firmware/amdgpu/gc_12_0_1_mes.bin.zst"
        " exists in filesystem\n"
    )
    nvidia = "linux-firmware-nvidia: /usr/lib/firmware/nvidia/ad103 exists in filesystem\n"
    assert entry not in _ids(head + amd)
    assert _first(head + nvidia) == entry


def test_libcxx_cause_of_missing_cmath_has_a_wording() -> None:
    """kokkos#7113's libc++ case: the entry has no condition for it, so the wording fixture
    names none; the entry answers it first."""
    path = WORDINGS / "hip.hipcc-missing-libstdcxx.libcxx-cuda-wrappers.txt"
    text = path.read_text(encoding="utf-8")
    assert "\ncondition:" not in text.partition("\n---\n")[0]
    assert _first(text.partition("\n---\n")[2]) == "hip.hipcc-missing-libstdcxx"


def test_windows_perl_missing_needs_a_hip_context() -> None:
    entry = "compiler.hip-sdk-windows-perl-missing"
    perl = (
        "'perl' is not recognized as an internal or external command,\n"
        "operable program or batch file.\n"
    )
    vcpkg = "C:\\src\\vcpkg> vcpkg install openssl\n-- Configuring x64-windows\n" + perl
    assert entry not in _ids(vcpkg)
    assert _first("C:\\work> hipconfig --version\n" + perl) == entry
    assert _first("-- HIP_PATH: C:/Program Files/AMD/ROCm/6.2/\n" + perl) == entry
    cmake = "CMake Error at C:/Program Files/AMD/ROCm/6.2/lib/cmake/hip/hip-config.cmake:5\n"
    assert _first(perl + cmake) == entry


def test_other_apt_methods_get_their_own_transport_package() -> None:
    entry = "apt.https-method-driver-missing"
    s3 = "E: The method driver /usr/lib/apt/methods/s3 could not be found.\n"
    tor = "E: The method driver /usr/lib/apt/methods/tor+https could not be found.\n"
    https = "E: The method driver /usr/lib/apt/methods/https could not be found.\n"
    assert "apt-transport-s3" in _fix(s3, entry)
    assert "apt-transport-tor" in _fix(tor, entry)
    assert "apt-get install -y\napt-transport-https" not in _fix(s3, entry)
    assert "apt-transport-https ca-certificates" in _fix(https, entry)
    assert "apt-transport-https ca-certificates" not in _fix(tor, entry)


def test_warpsize_only_on_the_quoted_line_or_the_macro_note_below() -> None:
    entry = "release.hip7-warpsize-not-constexpr"
    other = (
        "kernel.hip:42:12: error: non-type template argument is not a constant expression\n"
        "   42 |   reduce<blockDim.x>(v);\n"
        "      |          ^~~~~~~~~~\n"
        "kernel.hip:43:30: error: use of undeclared identifier 'lane'\n"
        "   43 |   if (threadIdx.x % warpSize == lane) out[0] = v;\n"
    )
    assert entry not in _ids(other)
    quoted = (
        "k.hip:12:24: error: non-type template argument is not a constant expression\n"
        "   12 |   WarpReduce<float, warpSize> r;\n"
    )
    assert _first(quoted) == entry


def test_omniperf_own_module_is_not_a_missing_dependency() -> None:
    entry = "release.omniperf-python-deps-missing"
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/rocm/libexec/rocprofiler-compute/rocprof-compute.py", line 12, in <module>\n'
        "    from rocprof_compute_base import RocProfCompute\n"
        "ModuleNotFoundError: No module named '{}'\n"
    )
    assert entry not in _ids(text.format("rocprof_compute_base"))
    assert entry not in _ids(text.format("omniperf_base"))
    assert _first(text.format("pandas")) == entry


def test_sources_without_an_established_cause_are_gone() -> None:
    assert not (WORDINGS / "apt.repo-host-not-resolved.apt-temporary-failure.txt").exists()
    entry = load_table().by_id["apt.dev-package-older-than-installed-library"]
    assert all("~gd" not in regex for c in entry.conditions for _, regex in c.match)


def test_apt_key_fix_is_generic() -> None:
    fix = load_table().by_id["apt.apt-key-needs-gnupg"].fix
    assert "<key URL>" in fix and "rocm.gpg.key" in fix


def test_fatbin_did_you_mean_with_indented_lld_notes() -> None:
    entry = "compiler.gpu-rdc-link"
    text = (
        "ld.lld: error: undefined symbol: __hip_fatbin\n"
        "  >>> referenced by square.cpp\n"
        "  >>>               square_host.o:(__hip_fatbin_wrapper)\n"
        "  >>> did you mean: __hip_fatbin_\n"
        "  >>> defined in: square_device.o\n"
    )
    found = match(text)
    assert found[0].id == entry and found[0].captures.get("fatbin_renamed") == "__hip_fatbin_"
