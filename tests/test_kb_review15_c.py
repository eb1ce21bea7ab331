"""Round 15 hostile read (reviewer c): counter-examples that failed before the fixes.

All texts are CONSTRUCTED (not captured): apt's "Depends: ... but it is not installable" format
(apt-pkg/depcache / apt-private output) with non-ROCm package names, and torch's
"Torch not compiled with CUDA enabled" (torch/cuda/__init__.py) followed by a user's hardware
line naming an NVIDIA card only by its RTX number.
"""

from __future__ import annotations

from rocmprov.kb import load_table

NOT_COMPILED = "AssertionError: Torch not compiled with CUDA enabled"

SILENT = [
    # KDE's Rocs, Rocket.Chat, Roccat tools, HipChat: "roc"/"hip" prefixes, not ROCm packages
    ("The following packages have unmet dependencies:\n"
     " rocs : Depends: libkf5grantlee3 but it is not installable\n",
     "apt.package-for-other-ubuntu-release"),
    (" rocket-chat : Depends: libssl1.1 but it is not installable\n",
     "apt.package-for-other-ubuntu-release"),
    (" roccat-tools : Depends: libgaminggear0 but it is not installable\n",
     "apt.package-for-other-ubuntu-release"),
    (" hipchat4 : Depends: libqt5webengine5 (>= 5.7) but it is not installable\n",
     "apt.package-for-other-ubuntu-release"),
    # an NVIDIA card named by its model number only, an old Radeon mentioned beside it
    (NOT_COMPILED + "\nI have an RTX 3080. Previously used a Radeon 5700 XT\n",
     "apt.cuda-torch-on-amd"),
    ("My old Radeon 6800 XT is in the drawer, now on a GTX 1080\n" + NOT_COMPILED + "\n",
     "apt.cuda-torch-on-amd"),
    # a convolution's BadParm with the model's LSTM defined a few lines above (constructed
    # traceback; torch's miopen conv path, not _VF.lstm)
    ("self.rnn = nn.LSTM(128, 256)\nself.conv = nn.Conv2d(3, 64, 3)\n  File \"model.py\", line 40,"
     " in forward\n    y = self.conv(x)\nRuntimeError: miopenStatusBadParm\n",
     "miopen.rnn-forward-failed"),
]  # fmt: skip

LEADS = [
    # a ROCm library's soname dependency still leads
    (" rocsolver6.1.1 : Depends: libcholmod3 (>= 1:5.1.2) but it is not installable\n",
     "apt.package-for-other-ubuntu-release"),
    (" hipsolver : Depends: libtinfo5 but it is not installable\n",
     "apt.package-for-other-ubuntu-release"),
]  # fmt: skip



def test_ray_fix_names_the_hip_noset_variable() -> None:
    entry = next(e for e in load_table().entries if e.id == "hip.invalid-device-ordinal")
    assert "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES" in entry.fix
