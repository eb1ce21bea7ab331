"""The torch smoke tests, run ON the host by its own python: `python smoke.py` prints one JSON.

Standalone on purpose (stdlib + torch only): rocmprov sends this file's text to the target
python, locally or over SSH. It uses the portable torch.cuda API only, so the same tests run on
a ROCm build (where torch.cuda is HIP and the nccl backend is RCCL) and on a CUDA build.
"""

import json
import socket
import sys
import time
import traceback


def _timed(name, fn, results):
    start = time.perf_counter()
    try:
        status, detail = fn()
        error = ""
    except Exception as exc:
        status, detail = "fail", f"{type(exc).__name__}: {exc}"
        error = traceback.format_exc(limit=6)
    results.append(
        {
            "test": name,
            "status": status,
            "seconds": round(time.perf_counter() - start, 3),
            "detail": detail,
            "error": error,
        }
    )


def devices(torch):
    if not torch.cuda.is_available():
        return "fail", "no GPU: torch.cuda.is_available() is False"
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return "pass", f"{len(names)} device(s): {', '.join(names)}"


def matmul(torch, n=4096):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen, dtype=torch.float32)
    b = torch.randn(n, n, generator=gen, dtype=torch.float32)
    ref = a.double() @ b.double()
    got = a.cuda() @ b.cuda()
    torch.cuda.synchronize()
    got = got.cpu().double()
    if not torch.isfinite(got).all():
        return "fail", "non-finite values in the GPU result"
    rel = float((got - ref).norm() / ref.norm())
    status = "pass" if rel < 1e-3 else "fail"
    return status, f"{n}x{n} fp32, relative error vs CPU fp64 {rel:.2e}"


def amp_step(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)
    ).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    before = model[0].weight.detach().clone()
    with torch.amp.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    torch.cuda.synchronize()
    changed = not torch.equal(before, model[0].weight.detach())
    if not (torch.isfinite(loss).item() and changed):
        return "fail", f"loss {loss.item()}, weights changed: {changed}"
    return "pass", f"fp16 autocast + GradScaler step, loss {loss.item():.4f}"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ddp_init(torch):
    import torch.distributed as dist

    port = _free_port()
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        model = torch.nn.parallel.DistributedDataParallel(
            torch.nn.Linear(8, 8).cuda(), device_ids=[0]
        )
        model(torch.randn(4, 8, device="cuda")).sum().backward()
        t = torch.ones(4, device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        ok = float(t.sum()) == 4.0
    finally:
        dist.destroy_process_group()
    backend = "RCCL" if getattr(torch.version, "hip", None) else "NCCL"
    return ("pass" if ok else "fail"), f"one-rank DDP, nccl backend ({backend}), port {port}"


def onnx_export(torch):
    try:
        import onnx
    except ImportError:
        return "skip", "onnx not installed"
    import io

    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU()).eval()
    buf = io.BytesIO()
    try:
        torch.onnx.export(model, (torch.randn(2, 16),), buf, dynamo=False)
    except TypeError:  # older torch: no dynamo argument
        torch.onnx.export(model, (torch.randn(2, 16),), buf)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    return "pass", f"exported {len(buf.getvalue())} bytes, {len(proto.graph.node)} nodes"


def main():
    out = {"python": sys.version.split()[0], "results": []}
    try:
        import torch
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        print(json.dumps(out))
        return
    out["torch"] = torch.__version__
    out["hip"] = getattr(torch.version, "hip", None)
    out["cuda"] = getattr(torch.version, "cuda", None)
    results = out["results"]
    _timed("devices", lambda: devices(torch), results)
    gpu = results[0]["status"] == "pass"
    for name, fn in (
        ("matmul", matmul),
        ("amp", amp_step),
        ("ddp", ddp_init),
        ("onnx", onnx_export),
    ):
        if gpu or name == "onnx":
            _timed(name, lambda fn=fn: fn(torch), results)
        else:
            results.append(
                {"test": name, "status": "skip", "seconds": 0.0, "detail": "no GPU", "error": ""}
            )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
