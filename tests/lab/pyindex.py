"""A PEP 503 package index for the lab: stand-in ROCm torch wheels at the path of an upstream
index URL (https://download.pytorch.org/whl/rocm6.4/, https://stable.repo.amd.com/rocm/whl-next/),
below the same ROOT/<upstream host>/ tree that amdrepo.py lays the apt repositories in, so the
mirrors that serve the repositories serve the index too.

The wheel is pure Python: `import torch` works and `torch.version.hip` answers, as a ROCm build
does; it declares the extras AMD's multi-arch wheels have (`device-all`, `device-<gfx>`), so
`pip install torch[device-all]==2.14.0+rocm10.1.0` resolves as against AMD's index.
"""

from __future__ import annotations

import base64
import hashlib
import html
import zipfile
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, urlsplit

# gfx targets named by AMD's multi-arch torch extras (the release table's gfx_packages note)
DEVICE_EXTRAS = ("device-all", "device-gfx942", "device-gfx950", "device-gfx90a",
                 "device-gfx1100", "device-gfx1201")  # fmt: skip


def torch_wheel(out: Path, version: str, hip: str, extras: Iterable[str] = DEVICE_EXTRAS) -> Path:
    """torch-<version>-py3-none-any.whl in `out`: imports, reports torch.version.hip."""
    out.mkdir(parents=True, exist_ok=True)
    name = f"torch-{version}-py3-none-any.whl"
    dist = f"torch-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n" + "".join(
        f"Provides-Extra: {e}\n" for e in extras
    )
    files = {
        "torch/__init__.py": f'__version__ = "{version}"\nfrom torch import version\n',
        "torch/version.py": f'__version__ = "{version}"\nhip = "{hip}"\ncuda = None\n',
        f"{dist}/METADATA": meta,
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: rocmprov-lab\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(out / name, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return out / name


def add_index(root: Path, index_url: str, wheels: Iterable[Path]) -> Path:
    """A simple index (PEP 503: /<project>/ pages of links with sha256 fragments) for
    `wheels` at `index_url`'s path below root/<host>/. Returns the project page."""
    parts = urlsplit(index_url)
    base = root / parts.hostname / parts.path.strip("/")
    by_project: dict[str, list[Path]] = {}
    for w in wheels:
        by_project.setdefault(w.name.split("-", 1)[0].lower(), []).append(w)
    page = base
    for project, files in by_project.items():
        page = base / project
        page.mkdir(parents=True, exist_ok=True)
        links = []
        for w in files:
            data = w.read_bytes()
            (page / w.name).write_bytes(data)
            sha = hashlib.sha256(data).hexdigest()
            links.append(f'<a href="{quote(w.name)}#sha256={sha}">{html.escape(w.name)}</a><br>')
        (page / "index.html").write_text(
            "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        )
    base.mkdir(parents=True, exist_ok=True)
    (base / "index.html").write_text(
        "<!DOCTYPE html><html><body>\n"
        + "".join(f'<a href="{p}/">{p}</a><br>\n' for p in by_project)
        + "</body></html>\n"
    )
    return page
