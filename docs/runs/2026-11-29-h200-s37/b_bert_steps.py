"""Session 37 call b: BERT-base's training step as models.py runs it (32 x 128 tokens, eager
attention, FP32, SDPA math), warm-up, then STEPS eager steps inside one NVTX range "timed", for
Nsight Systems. Run plain or with LD_PRELOAD=libtcsolve_cublas.so."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/hook/gpu"))
import models  # noqa: E402

STEPS = 10


class Args:
    sdpa = "math"


def main():
    import torch
    import transformers
    models.setup_torch(torch, Args())
    torch.manual_seed(models.SEED)
    model, config, info = models.bert_model(torch, transformers)
    model = model.to("cuda", torch.float32).train()
    gen = torch.Generator().manual_seed(models.SEED)
    ids = torch.randint(0, config.vocab_size, (32, 128), generator=gen).cuda()
    mask = torch.ones(32, 128, dtype=torch.long, device="cuda")

    def step():
        model.zero_grad(set_to_none=True)
        out = model(input_ids=ids, attention_mask=mask).last_hidden_state
        out.float().pow(2).mean().backward()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("timed")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(STEPS):
        step()
    stop.record()
    host = (time.perf_counter() - t0) * 1e3 / STEPS
    stop.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"step {start.elapsed_time(stop) / STEPS:.2f} ms (events), host enqueue {host:.2f} ms a step")


if __name__ == "__main__":
    main()
