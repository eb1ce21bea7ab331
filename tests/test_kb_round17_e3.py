"""Round 17 (engineer 3): profiler and compiler entry points of ROCm 7.x packages and of
TheRock's rocm-sdk wheels. Every text below is CONSTRUCTED (not a captured output): the
counter-examples are healthy or unrelated lines of the same programs that must not fire the
new patterns; the leads vary the reported wording (other paths, prefixes) to show robustness."""

from __future__ import annotations

LEADS = [
    # constructed: another profiled program, another absolute prefix, a shell prefix
    ("[rank0] ./bench: error while loading shared libraries: /opt/sqlite/lib/libsqlite3.so: "
     "cannot open shared object file: No such file or directory\n",
     "rocm.rocprofv3-sqlite3-absolute-needed"),
    # constructed: a real site-packages path, from `rocprofv3 -L`
    ("Traceback (most recent call last):\n  File \"/home/u/venv/bin/rocprofv3-avail\", line 8\n"
     "OSError: /home/u/venv/lib/python3.12/site-packages/_rocm_sdk_core/lib/rocprofiler-sdk/"
     "librocprofv3-list-avail.so: cannot open shared object file: No such file or directory\n",
     "pytorch.rocm-sdk-rocprofv3-avail-unversioned-so"),
    # constructed: amdflang from a venv with a full path
    ("could not exec /home/u/.venv/lib/python3.13/site-packages/_rocm_sdk_devel/bin/amdllvm: "
     "No such file or directory\n", "compiler.rocm-sdk-amdllvm-missing-in-bin"),
    # constructed: the plain ImportError of `python -c "import vllm._C"`, an at:: symbol
    ("ImportError: /opt/venv/lib/python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: "
     "_ZN2at4_ops5empty4callEv\n", "framework.torch-extension-built-for-other-torch"),
    # constructed: the deb preinst's line through apt (existing entry, deb wording)
    ("Preparing to unpack .../amd-container-toolkit_1.3.0~24.04_amd64.deb ...\nChecking for AMD "
     "GPU driver...\nError: AMD GPU driver (amdgpu) is not installed or loaded.\ndpkg: error "
     "processing archive (--unpack):\n new amd-container-toolkit package pre-installation "
     "script subprocess returned error exit status 1\n",
     "container.amd-ctk-install-needs-amdgpu"),
]  # fmt: skip

SILENT = [
    # constructed after vLLM's CUDA-only kernel case: an undefined symbol of vLLM's own
    # (not libtorch's) is a kernel not built for ROCm, another entry's cause
    ("ImportError: /usr/local/lib/python3.12/dist-packages/vllm/_C.abi3.so: undefined symbol: "
     "_Z18cutlass_mla_decodeRKN2at6TensorES2_\n",
     "framework.torch-extension-built-for-other-torch"),
    # constructed: a healthy vLLM start on ROCm
    ("INFO 05-22 08:41:53 [__init__.py:239] Automatically detected platform rocm.\n",
     "framework.torch-extension-built-for-other-torch"),
    # constructed: the healthy install (the check passes); guards the existing entry
    # container.amd-ctk-install-needs-amdgpu (no new pattern for it this round)
    ("Checking for AMD GPU driver...\nAMD GPU driver found.\nUnpacking amd-container-toolkit "
     "(1.3.0~26.04) over (1.3.0~24.04)\n", "container.amd-ctk-install-needs-amdgpu"),
    # constructed: an unrelated notice that merely names the driver
    ("Warning: AMD GPU driver (amdgpu) is loaded but no GPU was found by amd-ctk gpu list\n",
     "container.amd-ctk-install-needs-amdgpu"),
    # constructed: SQLite itself missing (runtime soname, no absolute path): another cause
    ("python3: error while loading shared libraries: libsqlite3.so.0: cannot open shared "
     "object file: No such file or directory\n", "rocm.rocprofv3-sqlite3-absolute-needed"),
    # constructed: a healthy rocprofv3 run
    ("$ rocprofv3 --kernel-trace --stats -- ./app\nW20260116 rocprofv3 tool initialized\n"
     "Warning: No tracing options were enabled.\n", "rocm.rocprofv3-sqlite3-absolute-needed"),
    # constructed: the versioned file itself missing (a broken install, not the symlink)
    ("OSError: /opt/rocm/lib/rocprofiler-sdk/librocprofv3-list-avail.so.1: cannot open shared "
     "object file: No such file or directory\n",
     "pytorch.rocm-sdk-rocprofv3-avail-unversioned-so"),
    # constructed: healthy `rocprofv3-avail list` output
    ("GPU:0\nName:\tgfx1151\nCounters:\tSQ_WAVES, SQ_INSTS_VALU, GRBM_COUNT\n",
     "pytorch.rocm-sdk-rocprofv3-avail-unversioned-so"),
    # constructed: a healthy compile with the wheel's driver
    ("$ $(rocm-sdk path --bin)/amdclang --version\nAMD clang version 23.0.0git\nTarget: "
     "x86_64-unknown-linux-gnu\nInstalledDir: /v/site-packages/_rocm_sdk_devel/lib/llvm/bin\n",
     "compiler.rocm-sdk-amdllvm-missing-in-bin"),
    # constructed: amdllvm present but not executable (another cause: permissions / noexec)
    ("could not exec /opt/rocm/llvm/bin/amdllvm: Permission denied\n",
     "compiler.rocm-sdk-amdllvm-missing-in-bin"),
]  # fmt: skip
