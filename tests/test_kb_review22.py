"""Session 22 hostile read of the new table entries: counter-examples that cried wolf or gave a
wrong cause before the read's fixes. Texts are CONSTRUCTED from the programs' format strings,
as each comment says (RCCL's net_ib.cc and topo.cc, NCCL's socket.cc, CPython's import system,
amd-smi's parser)."""

from __future__ import annotations

from tests.kbcases import assert_leads, assert_silent

# RCCL (net_ib.cc) logs the missing peer-memory line, then enables GPUDirect RDMA through
# DMA-BUF (topo.cc): a working setup, not the 6.2 known issue
_GDR_BY_DMABUF = (
    "node1:2:2 [0] NCCL INFO NET/IB : GDRDMA not enabled. Could not find memory_peers directory"
    " or peer_memory symbol\n"
    "node1:2:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
)


def test_gdr_through_dma_buf_is_not_the_peer_memory_issue() -> None:
    assert_silent(_GDR_BY_DMABUF, "release.rccl-gdr-disabled-no-peer-memory")
    assert_leads(_GDR_BY_DMABUF.splitlines()[0] + "\n", "release.rccl-gdr-disabled-no-peer-memory")


def test_a_module_shadowed_by_a_local_file_is_not_a_missing_binding() -> None:
    for text in (  # CPython's own messages for a partly imported or shadowed module
        "AttributeError: partially initialized module 'migraphx' has no attribute 'parse_onnx'"
        " (most likely due to a circular import)\n",
        "AttributeError: module 'migraphx' has no attribute 'parse_onnx' (consider renaming"
        " '/home/u/migraphx.py' since it has the same name as the library you intended to"
        " import)\n",
    ):
        assert_silent(text, "framework.migraphx-python-abi-mismatch")


def test_nccl_on_an_nvidia_machine_is_not_told_to_use_rccls_port_reuse() -> None:
    text = (
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
        "node1:1:1 [0] misc/socket.cc:483 NCCL WARN Call to bind failed : Address already in"
        " use\n"
    )
    assert_silent(text, "release.rccl-bind-address-in-use-alltoall")


def test_amd_smi_without_the_driver_names_the_driver_first() -> None:
    # amdsmi_parser.py leaves out `list` and most commands when amdgpu is not initialised
    text = "Command 'list' is not supported on the system. Run '--help' for more info.\n"
    assert_leads(text, "amdsmi.cli-command-not-supported-on-system")
    from rocmprov.kb import match

    (hit,) = [m for m in match(text) if m.id == "amdsmi.cli-command-not-supported-on-system"]
    assert "initstate" in hit.fix and "not loaded" in hit.title


def test_the_dropped_entries_stay_dropped() -> None:
    """A passing kfdtest run and a non-GPU device's D3hot line were diagnosed (prose fixtures
    from release notes could not pin the real failure line): both entries were removed."""
    from rocmprov.kb import load_table

    ids = {e.id for e in load_table().entries}
    assert "release.kfdtest-evict-queuetest-mi300x" not in ids
    assert "noise.vfio-d0-to-d3hot-refused-vm-off" not in ids
    passing = "[ RUN      ] KFDEvictTest.QueueTest\n[       OK ] KFDEvictTest.QueueTest (10 ms)\n"
    assert_silent(passing, "release.kfdtest-evict-queuetest-mi300x")
