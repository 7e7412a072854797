#!/usr/bin/env python3
# Pageable copy throughput of one process on its GPU (cuda:0): 256 MiB host to device, then back, for SECONDS
# each; prints GB/s. Run one per GPU at once (CUDA_VISIBLE_DEVICES=i) to see what the host shares among them.
import sys, time, torch
secs = float(sys.argv[1]); x = torch.empty(256 << 20, dtype=torch.uint8).fill_(1); d = torch.empty_like(x, device="cuda")
d.copy_(x); torch.cuda.synchronize()
for name, f in (("h2d", lambda: d.copy_(x)), ("d2h", lambda: x.copy_(d))):
    n = 0; t = time.time()
    while time.time() - t < secs: f(); torch.cuda.synchronize(); n += 1
    print(name, round(n * x.numel() / (time.time() - t) / 1e9, 2))
