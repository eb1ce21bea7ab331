"""Round 16, engineer 2: constructed counter-examples and cases for the patterns widened from
programs' sources where no table-side report shows the text.

Every text here is constructed (no report's text): ldd's "name => path (address)" lines and
LD_DEBUG=libs' "calling init: path" lines with ROCm's two thunk layouts (ROCT-Thunk-Interface
fd26b7f: /opt/rocm/libhsakmt/lib before ROCm 1.9, /opt/rocm/lib after), rocminfo's failure
lines (rocminfo.cc), and sentences a user might write around them.
"""

from __future__ import annotations

from rocmprov.kb import match

FAILED = (
    "hsa api call failure at: /src/rocminfo/rocminfo.cc:1306\n"
    "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
    "necessary resources.\n"
)


def ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


def test_stale_thunk_from_the_old_layout_next_to_a_new_rocr_is_the_version_mix() -> None:
    ldd = (
        "$ ldd /opt/rocm/bin/rocminfo\n"
        "\tlinux-vdso.so.1 (0x00007ffd6994d000)\n"
        "\tlibhsa-runtime64.so.1 => /opt/rocm-3.5.0/lib/libhsa-runtime64.so.1"
        " (0x00007f2a51630000)\n"
        "\tlibstdc++.so.6 => /usr/lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f2a512a7000)\n"
        "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2a50eb6000)\n"
        "\tlibhsakmt.so.1 => /opt/rocm/libhsakmt/lib/libhsakmt.so.1 (0x00007fcf0a065000)\n"
    )
    found = match(FAILED + ldd)
    assert found[0].id == "rocr.runtime-library-version-mix"
    assert found[0].captures.get("thunk") == "/opt/rocm/libhsakmt/lib/libhsakmt.so.1"


def test_ld_debug_init_order_thunk_first_is_the_version_mix_too() -> None:
    text = (
        "     12345:\tcalling init: /opt/rocm/libhsakmt/lib/libhsakmt.so.1\n"
        "     12345:\n"
        "     12345:\tcalling init: /opt/rocm/lib/libhsa-runtime64.so.1\n"
    ) + FAILED
    assert ids(text)[0] == "rocr.runtime-library-version-mix"


def test_rocm_1x_consistent_old_layout_is_not_a_mix() -> None:
    # ROCm 1.0-1.8 put ROCr in /opt/rocm/hsa/lib and the thunk in /opt/rocm/libhsakmt/lib
    ldd = (
        "\tlibhsa-runtime64.so.1 => /opt/rocm/hsa/lib/libhsa-runtime64.so.1 (0x00007f2a51630000)\n"
        "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2a50eb6000)\n"
        "\tlibhsakmt.so.1 => /opt/rocm/libhsakmt/lib/libhsakmt.so.1 (0x00007fcf0a065000)\n"
    )
    assert "rocr.runtime-library-version-mix" not in ids(ldd + FAILED)


def test_current_layout_alone_is_not_a_mix() -> None:
    ldd = (
        "\tlibhsa-runtime64.so.1 => /opt/rocm/lib/libhsa-runtime64.so.1 (0x00007f2a51630000)\n"
        "\tlibhsakmt.so.1 => /opt/rocm/lib/libhsakmt.so.1 (0x00007fcf0a065000)\n"
    )
    assert "rocr.runtime-library-version-mix" not in ids(ldd + FAILED)


def test_works_with_sudo_next_to_the_failure_is_the_permission_cause() -> None:
    for said in ("rocminfo works with sudo.", "With sudo it works fine.",
                 "It runs fine as root, but not as my user."):  # fmt: skip
        assert ids(FAILED + said + "\n")[0] == "kfd.permission-denied", said
        assert ids(said + "\n" + FAILED)[0] == "kfd.permission-denied", said


def test_sudo_mentioned_or_negated_is_no_evidence() -> None:
    for said in (
        "It doesn't work even with sudo.",
        "sudo apt install rocm-hip-sdk worked without errors",
        "I ran it with sudo and it still fails.",
        "Same as root: does not work with sudo either.",
        "with sudo it doesn't work",
        "running as root never works",
    ):
        assert "kfd.permission-denied" not in ids(FAILED + said + "\n"), said


def test_sudo_rocminfo_far_from_the_failure_or_without_agents_is_no_evidence() -> None:
    # `sudo rocminfo` that fails the same way lists no agents
    text = FAILED + "$ sudo rocminfo\nROCk module is loaded\n" + FAILED
    assert "kfd.permission-denied" not in ids(text)


def test_amd_ctk_messages_do_not_fire_on_healthy_output() -> None:
    ok = (
        "$ sudo amd-ctk runtime configure\nUpdated the config file: /etc/docker/daemon.json\n"
        "Please restart docker daemon\n$ sudo amd-ctk cdi generate --output=/etc/cdi/amd.json\n"
        "Generated CDI spec: /etc/cdi/amd.json\n$ amd-ctk cdi list\nFound 1 AMD GPU device\n"
        "amd.com/gpu=all\namd.com/gpu=0\n  /dev/dri/card1\n  /dev/dri/renderD128\n"
    )
    assert [i for i in ids(ok) if i.startswith("container.amd-ctk")] == []


DROP = ('time=2026-05-02T10:14:03.512Z level=INFO source=runner.go:405 msg="dropping integrated '
        'GPU; to enable, set OLLAMA_IGPU_ENABLE=1" id=1 library=ROCm compute=gfx1036 name=ROCm1 '
        'description="AMD Radeon Graphics" pci_id=0000:7a:00.0\n')


def test_ollama_igpu_dropped_next_to_a_discrete_gpu_stays_harmless() -> None:
    # discover/types.go logs the kept GPUs, and the CPU line only when none is left
    dgpu = ('time=2026-05-02T10:14:03.513Z level=INFO source=types.go:42 msg="inference compute" '
            'id=0 filter_id=0 library=ROCm compute=gfx1100 name=ROCm0 description="AMD Radeon RX '
            '7900 XTX" libdirs=ollama,rocm driver=60342.13 pci_id=0000:03:00.0 type=discrete '
            'total="24.0 GiB" available="23.1 GiB"\n')
    found = match(DROP + dgpu)
    assert "llm.ollama-igpu-dropped-not-allowlisted" not in [m.id for m in found]
    assert all(m.harmless for m in found if m.id.startswith("llm.ollama-igpu"))


def test_ollama_igpu_dropped_then_cpu_only_is_the_cause() -> None:
    cpu = ('time=2026-05-02T10:14:03.513Z level=INFO source=types.go:60 msg="inference compute" '
           'id=cpu library=cpu compute="" name=cpu description=cpu libdirs=ollama driver="" '
           'pci_id="" type="" total="30.6 GiB" available="27.9 GiB"\n')
    found = match(DROP + cpu)
    assert found[0].id == "llm.ollama-igpu-dropped-not-allowlisted"
    assert found[0].captures.get("gfx") == "gfx1036"
    assert "llm.ollama-igpu-skipped" not in [m.id for m in found]


def test_ollama_0129_second_cpu_node_as_gfx000_gets_the_update_advice() -> None:
    # gpu/amd_linux.go at v0.1.29: slog.Warn(fmt.Sprintf("amdgpu [%d] %s is not supported by %s
    # %v", ...)) for the second socket's node, then amd_common.go "Setting HIP_VISIBLE_DEVICES="
    text = (
        'time=2024-04-02T18:07:11.052Z level=INFO source=amd_linux.go:88 msg="detected amdgpu '
        'versions [gfx000 gfx1030]"\n'
        'time=2024-04-02T18:07:11.061Z level=WARN source=amd_linux.go:114 msg="amdgpu [0] gfx000 '
        'is not supported by /tmp/ollama2718/rocm [gfx1030 gfx1100 gfx900 gfx906 gfx908 gfx90a]"\n'
        'time=2024-04-02T18:07:11.061Z level=INFO source=amd_common.go:54 msg="Setting '
        'HIP_VISIBLE_DEVICES=1"\n'
    )
    top = match(text)[0]
    assert top.id == "rocm.ollama-gpu-not-supported"
    assert "0.1.33" in top.fix and "HSA_OVERRIDE_GFX_VERSION=" not in top.fix
