"""Review of session 24's HPC entries (Slurm, Cray, Lmod): each test is a defect found by a
hostile read, failing before its fix."""

from __future__ import annotations

from rocmprov.kb import load_table, match


def _ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


def test_out_of_scope_slurm_cray_apptainer_entries_are_gone() -> None:
    """General Slurm/Cray/Apptainer usage errors (nothing AMD- or GPU-specific) and srun's
    informational wait line, printed on healthy step queues, are not the table's business."""
    ids = {entry.id for entry in load_table().entries}
    for gone in (
        "container.slurm-invalid-account-partition",
        "container.slurm-qos-policy-violation",
        "container.slurm-cpu-bind-outside-step",
        "container.cray-omp-oversubscription-warning",
        "container.apptainer-cache-hash-mismatch",
        "container.slurm-step-creation-nodes-busy",
    ):
        assert gone not in ids, gone
    healthy = (
        "srun: Job 1234 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
        "srun: Step created for job 1234\n"
    )
    assert [m.id for m in match(healthy) if not m.harmless] == []


def test_node_config_unavailable_names_a_gpu_partition_only_for_a_gpu_request() -> None:
    """Slurm says "Requested node configuration is not available" for any request no node can
    meet; a CPU-only job was told to use a GPU partition."""
    entry = "container.slurm-node-config-unavailable"
    srun = "srun: error: Unable to allocate resources: "
    sbatch = "sbatch: error: Batch job submission failed: "
    message = "Requested node configuration is not available\n"
    for cpu_only in (
        srun + message,
        "$ srun -N1 -n4 --mem=900G ./a.out\n" + sbatch + message,
    ):
        assert entry not in _ids(cpu_only), cpu_only
    for gpu in (
        "srun -v -n1 --gres=gpu:8 ctest\n" + srun + message,
        "#SBATCH --gpus-per-node=8\n#SBATCH -p small\n" + sbatch + message,
        "$ salloc -N1 --gpus=4\n" + "salloc: error: Unable to allocate resources: " + message,
    ):
        assert _ids(gpu)[:1] == [entry], gpu


def test_gtl_not_linked_gives_no_amd_advice_on_an_nvidia_cray() -> None:
    """mpich.gtl-not-linked told a Perlmutter (NVIDIA A100) user to load craype-accel-amd-gfx90a
    and link libmpi_gtl_hsa."""
    entry = "mpich.gtl-not-linked"
    line = (
        "MPICH ERROR [Rank 0] [job id 2345678.0] [nid001234] - Abort(-1) (rank 0 in comm 0): "
        "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked\n"
    )
    nvidia = (
        "$ module load cudatoolkit craype-accel-nvidia80\n$ export MPICH_GPU_SUPPORT_ENABLED=1\n"
        "$ srun -n 4 --gpus-per-task=1 python train.py\n" + line
    )
    found = [m for m in match(nvidia) if m.id == entry]
    assert found, nvidia
    assert "libmpi_gtl_cuda" in found[0].fix
    assert "gtl_hsa" not in found[0].fix and "craype-accel-amd" not in found[0].fix
    # an NVIDIA machine by other evidence: no AMD-only answer
    smi = "| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4 |\n" + line
    assert all("gtl_hsa" not in m.fix for m in match(smi) if m.id == entry)
    # no vendor evidence (CSCS's page): the fix names both GTLs; AMD's nodes keep AMD's fix
    plain = [m for m in match(line) if m.id == entry]
    assert plain and "mpi_gtl_cuda" in plain[0].fix and "gtl_hsa" in plain[0].fix
    amd = [m for m in match("$ module load craype-accel-amd-gfx90a rocm\n" + line) if m.id == entry]
    assert amd and "gtl_hsa" in amd[0].fix


def test_lmod_rocm_conflict_anywhere_in_the_list_and_wrapped() -> None:
    """The pattern wanted `rocm` first in Lmod's list of loaded modules and the whole message on
    one line; Lmod lists several modules and wraps at 80 columns."""
    entry = "container.lmod-rocm-conflicts-with-prgenv-amd"
    for text in (
        'Lmod has detected the following error:  Cannot load module "amd/5.2.3" because these'
        " module(s) are loaded:\n   craype-accel-amd-gfx90a rocm\n",
        "Lmod has detected the following error: Cannot load module\n"
        '"amd/5.2.3" because these module(s) are loaded:\n   rocm\n',
        'Lmod has detected the following error:  Cannot load module "amd/5.0.2" because these'
        " module(s) are loaded:\r\n   rocm\r\n",
    ):
        assert _ids(text)[:1] == [entry], text
    other = (
        'Lmod has detected the following error:  Cannot load module "amd/5.2.3" because these'
        " module(s) are loaded:\n   craype-accel-amd-gfx90a rocmlib\n"
    )
    assert entry not in _ids(other)


def test_wrapped_lines_with_crlf_endings() -> None:
    """Two-line patterns allowed `[ \\t]*\\n?` at the wrap, so a CRLF log (a Windows terminal,
    a saved web page) did not match."""
    gres = (
        "srun: error: Unable to create step for job 4321: Invalid generic\r\n"
        "resource (gres) specification\r\n"
    )
    assert _ids(gres)[:1] == ["container.slurm-step-gres-invalid"]
    c10d = (
        "[W socket.cpp:697] [c10d] The client socket cannot be initialized to connect to "
        "[frontier01234.frontier.olcf.ornl.gov]:3442\r\n"
        "(errno: 97 - Address family not supported by protocol).\r\n"
    )
    assert "noise.c10d-client-socket-ipv6-fallback" in _ids(c10d)
