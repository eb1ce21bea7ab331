"""Round 18 (engineer 5): multi-GPU, memory configuration and WSL. Every text below is
CONSTRUCTED (not a captured output) from the programs' format strings: the leads vary the
wording real reports show (other pids, prefixes, line order); the counter-examples are healthy
or unrelated lines of the same programs that must not fire the new patterns."""

from __future__ import annotations

LEADS = [
    # constructed from librocdxg's pr_err: native Windows build (no WSL line), other pid/tid
    ("pid:25152 tid:0x26356 [topology_sysfs_get_system_props] No WDDM adapters found.\n"
     "checkHipErrors() HIP API error = 0100 \"no ROCm-capable device is detected\"\n",
     "wsl.no-wddm-adapters"),
    # constructed: the WDDM line printed before rocminfo's WSL notice; the DXG-detection entry
    # (which needs the two rocminfo lines adjacent) must not be the first cause
    ("pid:2971 tid:0x7553c30d9e80 [topology_sysfs_get_system_props] No WDDM adapters found.\n"
     "WSL environment detected.\nhsa_init Failed, possibly no supported GPU devices\n",
     "wsl.no-wddm-adapters"),
    # constructed from RCCL's net_ib.cc format (RoCE peer, GIDs appended), behind a torchrun
    # rank prefix
    ("[rank12]: node-b:4411:4502 [4] transport/net_ib.cc:2112 NCCL WARN NET/IB : Got completion "
     "from peer 10.20.3.7<41877> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid "
     "::ffff:10.20.3.8 remoteGids::ffff:10.20.3.7\n", "rccl.ib-completion-retry-exceeded"),
    # constructed: the same line from an InfiniBand (not RoCE) fabric, no GIDs, receive side
    ("mi300-n07:88:121 [0] NCCL WARN NET/IB : Got completion from peer [fe80::1]<50123> with "
     "status=12 opcode=128 len=0 vendor err 129 (Recv)\n", "rccl.ib-completion-retry-exceeded"),
    # constructed from RCCL's other MSCCL++ WARN (init.cc): a GPU that is not gfx94x
    ("node1:12:12 [0] /src/init.cc:2061 NCCL WARN MSCCL++: Cannot enable MSCCL++ on "
     "gfx90a:sramecc+:xnack- architecture\n", "noise.rccl-mscclpp-not-compatible"),
]  # fmt: skip

SILENT = [
    # constructed: HSA_ENABLE_DXG_DETECTION unset: librocdxg never ran, no WDDM line
    ("WSL environment detected.\nhsa_init Failed, possibly no supported GPU devices\n",
     "wsl.no-wddm-adapters"),
    # constructed: a healthy rocminfo under WSL
    ("WSL environment detected.\n=====================\nHSA System Attributes\n"
     "=====================\nRuntime Version:         1.18\nDMAbuf Support:          YES\n"
     "  Name:                    gfx1100\n  Marketing Name:          AMD Radeon RX 7900 XTX\n",
     "wsl.no-wddm-adapters"),
    # constructed: a work request flushed (status 5) after another failure: not the timeout
    ("node-a:12:40 [1] NCCL WARN NET/IB : Got completion from peer 10.1.0.2<33001> with "
     "status=5 opcode=0 len=0 vendor err 249 (Send)\n", "rccl.ib-completion-retry-exceeded"),
    # constructed: a status whose number only starts with 12, old format
    ("NCCL WARN NET/IB : Got completion with error 120, opcode 1, len 0, vendor err 0\n",
     "rccl.ib-completion-retry-exceeded"),
    # constructed: a healthy RCCL start over RoCE
    ("node-a:12:40 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB "
     "eth0:10.1.0.1<0>\nnode-a:12:40 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.\n",
     "rccl.ib-completion-retry-exceeded"),
    # constructed: MSCCL++ in use (the healthy INFO line of the same block)
    ("node1:12:12 [0] NCCL INFO MSCCL++: Enabled! Msg size threshold=1048576\n",
     "noise.rccl-mscclpp-not-compatible"),
]  # fmt: skip
