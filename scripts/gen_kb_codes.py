"""Generate rocmprov/data/kb_codes.yaml: every status code of the ROCm libraries, from their
public headers (and, where the library has one, the source of its "code -> message" function).

    python scripts/gen_kb_codes.py --mirror /work/.mirror > rocmprov/data/kb_codes.yaml

Each family below names the repository, the file and the commit it is read from; the output
records them, so a reader can open the exact header. `--mirror DIR` finds a repository as a git
directory at DIR/<owner>+<name>/repo (what `fetch` brings) or DIR/<owner>/<name> (a clone);
files are read with `git show COMMIT:PATH`, so the checkout's own state does not matter.

What is hand-written here and nowhere else: per family the title, the category, the generic next
step and where to report. Everything per code (name, value, meaning, message) comes from the
files. The parsers are pure and tested on excerpts of the same headers (tests/test_kb_codes.py).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# ---------------------------------------------------------------- where each family comes from


@dataclass(frozen=True)
class Source:
    repo: str  # owner/name on GitHub
    commit: str
    path: str
    enum: str = ""  # typedef name of the enum, or
    marker: str = ""  # a comment that precedes an anonymous `enum {` adding codes
    function: str = ""  # a "code -> message" function (its switch is read)

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}"


@dataclass(frozen=True)
class Family:
    id: str
    type: str
    title: str
    category: str
    prefix: str  # every name of the family starts with this
    next_step: str
    report: str  # where to report a problem the table does not know
    sources: tuple[Source, ...] = field(default_factory=tuple)
    hex: bool = False  # programs print these codes as hex too (0x1008)


HIP = "ROCm/HIP", "c5e11fcac8249ce4f7e70157588ff9661a870b59"
CLR = "ROCm/clr", "f9f995c6d0aecec28debd3db0f41df0c15ec003d"
SYSTEMS = "ROCm/rocm-systems", "1b1610fc2b2ab32af71e6e04e4d4a6a4ae597992"
ROCR = "projects/rocr-runtime/runtime/hsa-runtime"

FAMILIES = (
    Family(
        id="hip", type="hipError_t", title="HIP runtime error", category="hip",
        prefix="hipError",
        next_step=(
            "Rerun with `AMD_LOG_LEVEL=3` (HIP's own log) to see which call failed and why; "
            "check that the GPU is visible (`rocminfo | grep -m1 gfx`) and that the program was "
            "built for its gfx target. Then `rocmprov explain` the new log."
        ),
        report="https://github.com/ROCm/ROCm/issues",
        sources=(
            Source(*HIP, path="include/hip/hip_runtime_api.h", enum="hipError_t"),
            Source(*CLR, path="hipamd/src/hip_error.cpp", function="ihipGetErrorString"),
        ),
    ),
    Family(
        id="hsa", type="hsa_status_t", title="HSA (ROCr runtime) status", category="rocr",
        prefix="HSA_STATUS_", hex=True,
        next_step=(
            "The ROCr runtime refused or failed a request. Check /dev/kfd access (render and "
            "video groups), `dmesg | grep -i amdgpu` for a GPU fault or reset at the same time, "
            "and rerun with `HSAKMT_DEBUG_LEVEL=7 AMD_LOG_LEVEL=4` for the failing call."
        ),
        report="https://github.com/ROCm/ROCm/issues",
        sources=(
            Source(*SYSTEMS, path=f"{ROCR}/inc/hsa.h", enum="hsa_status_t"),
            Source(*SYSTEMS, path=f"{ROCR}/inc/hsa_ext_amd.h",
                   marker="@remark Additions to hsa_status_t"),
            Source(*SYSTEMS, path=f"{ROCR}/core/runtime/hsa.cpp", function="hsa_status_string"),
        ),
    ),
    Family(
        id="amdsmi", type="amdsmi_status_t", title="AMD SMI status", category="amdsmi",
        prefix="AMDSMI_STATUS_",
        next_step=(
            "amd-smi could not read or set this on the device. Check that the amdgpu driver is "
            "loaded (`lsmod | grep amdgpu`), that you have permission (root for settings), that "
            "the amd-smi library matches the installed ROCm (`amd-smi version`), and whether the "
            "metric is supported on this GPU or inside a VM."
        ),
        report="https://github.com/ROCm/amdsmi/issues",
        sources=(Source("ROCm/amdsmi", "0ceca28f4139dced5e9b5739a3f393780d7add48",
                        path="include/amd_smi/amdsmi.h", enum="amdsmi_status_t"),),
    ),
    Family(
        id="rocblas", type="rocblas_status", title="rocBLAS status", category="rocblas",
        prefix="rocblas_status_",
        next_step=(
            "Rerun with `ROCBLAS_LAYER=1` (log the calls) to see the failing call and its sizes; "
            "check that rocBLAS ships kernels for this GPU (`ls /opt/rocm/lib/rocblas/library | "
            "grep <gfx>`) and that the sizes/pointers passed are valid."
        ),
        report="https://github.com/ROCm/rocm-libraries/issues",
        sources=(Source("ROCm/rocBLAS", "b520bc83fa67045bed4544f33ba83ce3a7c39c44",
                        path="library/include/internal/rocblas-types.h",
                        enum="rocblas_status"),),
    ),
    Family(
        id="hipblas", type="hipblasStatus_t", title="hipBLAS / hipBLASLt status",
        category="rocblas", prefix="HIPBLAS_STATUS_",
        next_step=(
            "Rerun with `HIPBLASLT_LOG_LEVEL=2` or `ROCBLAS_LAYER=1` to see the failing call; "
            "ARCH_MISMATCH and NOT_SUPPORTED usually mean the library has no kernels for this "
            "GPU's gfx target (PyTorch: set `TORCH_BLAS_PREFER_HIPBLASLT=0`)."
        ),
        report="https://github.com/ROCm/rocm-libraries/issues",
        sources=(Source("ROCm/hipBLAS-common", "9666c576c4b4bb60cde638a40646295906f6b736",
                        path="library/include/hipblas-common.h", enum="hipblasStatus_t"),),
    ),
    Family(
        id="miopen", type="miopenStatus_t", title="MIOpen status", category="miopen",
        prefix="miopenStatus",
        next_step=(
            "Rerun with `MIOPEN_ENABLE_LOGGING=1 MIOPEN_LOG_LEVEL=5` to see the failing "
            "convolution and solver; check that ~/.cache/miopen (or MIOPEN_USER_DB_PATH) is "
            "writable and that MIOpen's kernels exist for this GPU."
        ),
        report="https://github.com/ROCm/rocm-libraries/issues",
        sources=(Source("ROCm/MIOpen", "2d1fd997a6fcf801ac4ca7a63e0656ef1cb9f488",
                        path="include/miopen/miopen.h", enum="miopenStatus_t"),),
    ),
    Family(
        id="rccl", type="ncclResult_t", title="RCCL (NCCL API) result", category="rccl",
        prefix="nccl",
        next_step=(
            "Rerun with `NCCL_DEBUG=INFO` (RCCL reads the NCCL_* variables) on every rank and "
            "look for the first WARN line; check that every rank sees its GPUs and that the "
            "network interface (`NCCL_SOCKET_IFNAME`) is reachable between the hosts."
        ),
        report="https://github.com/ROCm/rccl/issues",
        sources=(
            Source("ROCm/rccl", "0cbce2a7571c907554199fad7e905f16ec0a565c",
                   path="src/nccl.h.in", enum="ncclResult_t"),
            Source("ROCm/rccl", "0cbce2a7571c907554199fad7e905f16ec0a565c",
                   path="src/init.cc", function="ncclGetErrorString_impl"),
        ),
    ),
)  # fmt: skip

# ---------------------------------------------------------------- pure parsers


@dataclass
class Code:
    name: str
    value: int
    meaning: str = ""
    message: str = ""
    alias_of: str = ""


_DOC_TAIL = re.compile(r"(?:///<|//!<|/\*\*<|/\*!<)\s*(.*?)\s*(?:\*/)?\s*$")
_ENTRY = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*(?:=\s*(?P<value>[-\w]+))?\s*,?\s*(?P<rest>.*)$")


def enum_body(text: str, *, enum: str = "", marker: str = "") -> str:
    """The text between the braces of `typedef enum ... { ... } ENUM;`, or of the first
    `enum {` after `marker`."""
    if enum:
        end = re.search(rf"\}}\s*{re.escape(enum)}\s*;", text)
        if end is None:
            raise ValueError(f"enum {enum} not found")
        start = text.rfind("{", 0, end.start())
        open_at = text.rfind("enum", 0, start)
        if start < 0 or open_at < 0:
            raise ValueError(f"enum {enum}: no opening brace")
        return text[start + 1 : end.start()]
    at = text.find(marker)
    if at < 0:
        raise ValueError(f"marker {marker!r} not found")
    start = text.find("enum {", at)
    end = text.find("};", start)
    if start < 0 or end < 0:
        raise ValueError(f"no enum after {marker!r}")
    return text[start + len("enum {") : end]


def _clean(doc: str) -> str:
    doc = re.sub(r"\s+", " ", doc).strip().rstrip("*/").strip()
    return doc


def parse_enum(body: str, prefix: str) -> list[Code]:
    """Codes of an enum body: values (decimal or hex; a missing value is the previous + 1),
    documentation from a trailing `///<`-style comment (continued on following lines) or from
    the `/** ... */` block just before the name. A second name with a value already seen is an
    alias (HIP keeps deprecated names)."""
    codes: list[Code] = []
    by_value: dict[int, str] = {}
    pending: list[str] = []
    in_block = False
    last: Code | None = None
    lines: list[str] = []
    for raw in body.splitlines():  # `name\n    = 13, /**< doc */` (clang-format) is one entry
        if raw.strip().startswith("=") and lines:
            lines[-1] = f"{lines[-1].rstrip()} {raw.strip()}"
        else:
            lines.append(raw)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if in_block:
            if "*/" in line:
                in_block = False
                line = line.split("*/", 1)[0]
            pending.append(line.lstrip("*").strip())
            continue
        if line.startswith("/**") or line.startswith("/*!") or line.startswith("/*"):
            if "*/" not in line:
                in_block = True
                pending = [line.lstrip("/*!").strip()]
                continue
            pending = [line.strip("/*! ")]
            continue
        tail = _DOC_TAIL.match(line)
        if tail and last is not None:  # `///< more text` continuing the previous entry
            last.meaning = _clean(f"{last.meaning} {tail.group(1)}")
            continue
        if not line or line.startswith("//") or line.startswith("#"):
            continue
        m = _ENTRY.match(line)
        if m is None or not m.group("name").startswith(prefix):
            pending = []
            continue
        name, raw_value, rest = m.group("name"), m.group("value"), m.group("rest")
        value = int(raw_value, 0) if raw_value else (codes[-1].value + 1 if codes else 0)
        doc = ""
        tail = re.search(r"(?:///<|//!<|/\*\*<|/\*!<)\s*(.*?)\s*(?:\*/)?\s*$", rest)
        if tail:
            doc = tail.group(1)
        elif pending:
            doc = " ".join(pending)
        code = Code(name=name, value=value, meaning=_clean(doc))
        if value in by_value:
            code.alias_of = by_value[value]
        else:
            by_value[value] = name
        codes.append(code)
        last = code
        pending = []
    return codes


def function_body(text: str, function: str) -> str:
    """The body of `function(...) { ... }` (brace-balanced; string literals skipped)."""
    m = re.search(rf"\b{re.escape(function)}\s*\([^)]*\)\s*\{{", text)
    if m is None:
        raise ValueError(f"function {function} not found")
    depth, i = 1, m.end()
    while depth and i < len(text):
        ch = text[i]
        if ch == '"':
            i = text.index('"', i + 1) if text[i - 1] != "\\" else i
            while text[i - 1] == "\\":
                i = text.index('"', i + 1)
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        i += 1
    return text[m.end() : i - 1]


_CASE = re.compile(
    r"case\s+(\w+)\s*:\s*(?:\*\s*\w+\s*=\s*|return\s+)((?:\"(?:[^\"\\]|\\.)*\"\s*)+);"
)


def parse_messages(body: str) -> dict[str, str]:
    """`case NAME: return "text";` (or `*out = "a" "b";`) -> {NAME: text}."""
    out: dict[str, str] = {}
    for name, literals in _CASE.findall(body):
        parts = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", literals)
        out[name] = "".join(parts).encode().decode("unicode_escape")
    return out


# ---------------------------------------------------------------- reading and writing


def read_file(mirror: Path, source: Source) -> str:
    owner, name = source.repo.split("/")
    for git_dir in (mirror / f"{owner}+{name}" / "repo", mirror / owner / name / ".git",
                    mirror / owner / name):  # fmt: skip
        if git_dir.exists():
            out = subprocess.run(
                ["git", f"--git-dir={git_dir}", "show", f"{source.commit}:{source.path}"],
                check=True, capture_output=True, timeout=60,
            )  # fmt: skip
            return out.stdout.decode("utf-8", errors="replace")
    raise FileNotFoundError(f"{source.repo} not under {mirror}")


def family_codes(family: Family, files: dict[Source, str]) -> list[Code]:
    codes: list[Code] = []
    messages: dict[str, str] = {}
    for source in family.sources:
        text = files[source]
        if source.function:
            messages.update(parse_messages(function_body(text, source.function)))
        else:
            body = enum_body(text, enum=source.enum, marker=source.marker)
            codes.extend(parse_enum(body, family.prefix))
    for code in codes:
        message = messages.get(code.name, "")
        # hsa_status_string repeats the name: "HSA_STATUS_ERROR_X: text"
        code.message = message.removeprefix(f"{code.name}: ")
    return codes


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def render(families: list[tuple[Family, list[Code]]]) -> str:
    out = [
        "# Status codes of the ROCm libraries, generated by scripts/gen_kb_codes.py from the",
        "# headers (and message functions) named under each family; do not edit by hand.",
        "schema: rocmprov.kb-codes/1",
        "families:",
    ]
    for family, codes in families:
        out += [
            f"- id: {family.id}",
            f"  type: {family.type}",
            f"  title: {_quote(family.title)}",
            f"  category: {family.category}",
            f"  prefix: {family.prefix}",
            f"  hex: {'true' if family.hex else 'false'}",
            f"  next_step: {_quote(family.next_step)}",
            f"  report: {family.report}",
            "  sources:",
        ]
        for s in family.sources:
            out.append(
                f"    - {{repo: {s.repo}, path: {s.path}, commit: {s.commit}, url: {s.url}}}"
            )
        out.append("  codes:")
        for c in codes:
            item = f"    - {{name: {c.name}, value: {c.value}"
            if c.meaning:
                item += f", meaning: {_quote(c.meaning)}"
            if c.message:
                item += f", message: {_quote(c.message)}"
            if c.alias_of:
                item += f", alias_of: {c.alias_of}"
            out.append(item + "}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="where the repositories are")
    args = parser.parse_args(argv)
    result = []
    for family in FAMILIES:
        files = {s: read_file(args.mirror, s) for s in family.sources}
        result.append((family, family_codes(family, files)))
    sys.stdout.write(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
