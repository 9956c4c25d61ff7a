#!/usr/bin/env python3
"""Profile a few training steps of a small GPT-style model with torch.profiler
and write the trace acesim's Kineto replay reads (docs/workloads.md, section 7).

GPU-bound on purpose (large matrices, few launches) and with the two things
the public HTA traces lack: cuda_sync events (enable_cuda_sync_events) and a
second stream the compute stream waits on (the next batch copied host to
device on a side stream). Usage:

    python3 tools/kineto-capture/capture.py OUT.json.gz [--layers 4] [--hidden 2048]
"""
import argparse
import gzip
import json
import os
import shutil
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(h)
        self.ln2 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)
        self.heads = heads

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--allreduce", action="store_true",
                   help="a one-rank NCCL process group all-reduces the gradients (the collective's arguments in the trace)")
    a = p.parse_args()
    dev = torch.device("cuda", 0)
    if a.allreduce:
        import torch.distributed as dist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(a.vocab, a.hidden), *[Block(a.hidden, a.heads) for _ in range(a.layers)],
                          nn.LayerNorm(a.hidden), nn.Linear(a.hidden, a.vocab)).to(dev, torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    host = [torch.randint(0, a.vocab, (a.batch, a.seq + 1)).pin_memory() for _ in range(2)]
    copy_stream = torch.cuda.Stream()

    def fetch(i):
        with torch.cuda.stream(copy_stream):
            t = host[i % 2].to(dev, non_blocking=True)
        return t

    nxt = fetch(0)
    sched = torch.profiler.schedule(wait=1, warmup=2, active=3, repeat=1)
    cfg = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    tmp = a.out + ".raw.json"
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                schedule=sched, experimental_config=cfg,
                                on_trace_ready=lambda prof: prof.export_chrome_trace(tmp)) as prof:
        for step in range(6):
            torch.cuda.current_stream().wait_stream(copy_stream)
            batch = nxt
            batch.record_stream(torch.cuda.current_stream())
            nxt = fetch(step + 1)
            logits = model(batch[:, :-1])
            loss = nn.functional.cross_entropy(logits.float().view(-1, a.vocab), batch[:, 1:].reshape(-1))
            loss.backward()
            if a.allreduce:
                for prm in model.parameters():
                    dist.all_reduce(prm.grad)
            opt.step()
            opt.zero_grad(set_to_none=True)
            loss.item()  # the host waits for the step, as a training loop that logs does
            prof.step()
    with open(tmp, "rb") as f, gzip.open(a.out, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    d = json.load(open(tmp))
    os.remove(tmp)
    ev = d["traceEvents"]
    cats = {}
    for e in ev:
        cats[e.get("cat")] = cats.get(e.get("cat"), 0) + 1
    steps = [round(e["dur"]) for e in ev if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") == "user_annotation"]
    if a.allreduce:
        dist.destroy_process_group()
    print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "events": len(ev), "by_cat": cats,
                      "steps_us": steps, "bytes_gz": os.path.getsize(a.out)}, indent=1))


if __name__ == "__main__":
    main()
