"""Session 29 coverage (C2: runtime, driver and devices): the conditions and boundaries of the
entries this round added or widened. Inputs are written for the tests in the programs' real
formats as the entries' cited sources show them; they are not captures of real machines."""

from __future__ import annotations

from tests.kb_helpers import first as _first

_DOCKER_KFD = (
    'docker: Error response from daemon: error gathering device information while adding '
    'custom device "/dev/kfd": no such file or directory.\n'
)


def test_docker_without_kfd_under_wsl2_is_told_to_pass_dev_dxg() -> None:
    text = "Linux host 5.15.167.4-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux\n" + _DOCKER_KFD
    found = _first(text)
    assert found is not None and found.id == "container.kfd-missing-on-host"
    assert found.condition.startswith("the log shows a WSL2 kernel"), found.condition
    assert "--device=/dev/dxg" in found.fix


def test_docker_without_kfd_on_a_linux_host_keeps_the_host_driver_fix() -> None:
    text = "Linux host 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n" + _DOCKER_KFD
    found = _first(text)
    assert found is not None and found.id == "container.kfd-missing-on-host"
    assert found.condition == ""
    assert "modprobe amdgpu" in found.fix


def test_kfd_parameter_check_answers_before_the_harmless_amdgpu_init_lines() -> None:
    text = (
        "[    4.304439] [drm] amdgpu kernel modesetting enabled.\n"
        "[    4.314189] amdgpu: sched_policy has invalid value\n"
        "[    4.314350] amdgpu 0000:2f:00.0: enabling device (0006 -> 0007)\n"
    )
    found = _first(text)
    assert found is not None and found.id == "kfd.module-param-invalid"
    assert "sched_policy" in found.fix


def test_adaptivecpp_memset_only_hip_invalid_value_is_the_freed_buffer_cause() -> None:
    line = "hip_queue: hipMemsetAsync() failed (error code = HIP:{code})\n"
    found = _first(line.format(code=1))
    assert found is not None and found.id == "sycl.acpp-hip-memset-freed-buffer"
    other = _first(line.format(code=2))  # hipErrorOutOfMemory: another cause
    assert other is None or other.id != "sycl.acpp-hip-memset-freed-buffer"


def test_clinfo_platform_not_found_beside_a_failing_rocminfo_is_the_runtime_not_the_icd() -> None:
    rocminfo = (
        "hsa api call failure at line 900, file: /data/jenkins_workspace/compute-rocm-rel-2.2/"
        "rocminfo/rocminfo.cc. Call returned 4104\n"
    )
    clinfo = "ERROR: clGetPlatformIDs(-1001)\n"
    both = _first(rocminfo + "$ clinfo\n" + clinfo)
    assert both is not None and both.id == "rocr.out-of-resources"
    alone = _first("$ /opt/rocm/opencl/bin/x86_64/clinfo\n" + clinfo)
    assert alone is not None and alone.id == "rocr.opencl-no-platform"


def test_a_rocrtst_sample_failing_hsa_init_beside_clinfo_platform_not_found_is_answered() -> None:
    # ROCR-Runtime's rocrinfo sample (rocrtst/samples/rocrinfo/rocrinfo.cc#L53) prints the same
    # RET_IF_HSA_ERR line as rocminfo of ROCm 1.x-2.x, with its own file name
    text = (
        "$ ./rocrinfo\n"
        "hsa api call failure at line 906, file: /home/user/ROCR-Runtime/rocrtst/samples/rocrinfo/"
        "rocrinfo.cc. Call returned 4104\n"
        "$ /opt/rocm/opencl/bin/x86_64/clinfo\n"
        "ERROR: clGetPlatformIDs(-1001)\n"
    )
    found = _first(text)
    assert found is not None and found.id == "rocr.out-of-resources"


def test_clinfo_platform_not_found_after_a_kfd_open_error_no_entry_answers_still_gets_one() -> None:
    # kfd_open() errors that no /dev/kfd entry answers must not silence the OpenCL answer
    for errno_text in ("Resource temporarily unavailable", "Bad address"):
        text = (
            "ROCk module is loaded\n"
            f"Unable to open /dev/kfd read-write: {errno_text}\n"
            "marc is member of render group\n"
            "$ /opt/rocm/opencl/bin/x86_64/clinfo\n"
            "ERROR: clGetPlatformIDs(-1001)\n"
        )
        found = _first(text)
        assert found is not None and found.id == "rocr.opencl-no-platform", errno_text
    answered = _first(
        "ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
        "$ clinfo\nERROR: clGetPlatformIDs(-1001)\n"
    )
    assert answered is not None and answered.id != "rocr.opencl-no-platform"


def test_kfd_parameter_check_answers_before_rocminfos_missing_kfd_lines() -> None:
    text = (
        "[    4.304439] [drm] amdgpu kernel modesetting enabled.\n"
        "[    4.314189] amdgpu: sched_policy has invalid value\n"
        "$ rocminfo\n"
        "ROCk module is loaded\n"
        "Unable to open /dev/kfd read-write: No such file or directory\n"
        "marc is member of render group\n"
        "hsa api call failure at: /src/rocminfo/rocminfo.cc:1306\n"
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
        "necessary resources. This error may also occur when the core runtime library needs to "
        "spawn threads or create internal OS-specific events.\n"
    )
    found = _first(text)
    assert found is not None and found.id == "kfd.module-param-invalid"
    assert "amdkfd" in found.cause and "/sys/module/amdkfd/parameters" in found.fix


_ACPP_MEMSET = (
    "[hipSYCL Error] from /x/AdaptiveCpp/src/runtime/hip/hip_queue.cpp:393 @ submit_memset(): "
    "hip_queue: hipMemsetAsync() failed (error code = HIP:1)\n"
)


def test_adaptivecpp_memset_states_hips_meaning_and_the_cache_workaround_as_gromacss_case() -> None:
    found = _first(_ACPP_MEMSET)
    assert found is not None and found.id == "sycl.acpp-hip-memset-freed-buffer"
    assert "(GROMACS)" not in found.title and "never allocated through HIP" in found.cause
    fix = found.fix
    assert fix.index("In GROMACS") < fix.index("ACPP_RT_MAX_CACHED_NODES") < fix.index("In another")


def test_memory_in_use_alone_does_not_blame_the_program_or_point_at_teardown_noise() -> None:
    found = _first(
        "Memory critical error by agent node-0 (Agent handle: 0x55d1c3a1b2c0) on address "
        "0x7f2a00000000. Reason: Memory in use.\n"
    )
    assert found is not None and found.id == "rocr.memory-free-in-use"
    assert "Freeing queue vital buffer" not in found.fix
    assert "the cause is open" in found.cause and "ROCm userspace or driver" in found.cause
    assert "HSAKMT_DEBUG_LEVEL=7" in found.fix and "to the program and to ROCm" in found.fix
