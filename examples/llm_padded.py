"""GAE for RL on a language model: a right-padded batch of responses of different lengths, a
reward on each response's last token (a reward model's score) plus a per-token penalty, token
values from a critic, γ = 1.

Each response ends with ``terminated`` at its last real token, so nothing crosses into the
padding and every real token's advantage is that of its response computed alone, whatever the
padding holds (NaN here, to prove it). The script checks exactly that, then masks the loss as a
trainer would. Runs on CPU or, if present, on a CUDA GPU.

    python examples/llm_padded.py                     # 8 responses of up to 4096 tokens
    python examples/llm_padded.py --batch 4 --max-len 64
"""
import argparse

import torch

import rlscan


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--max-len", type=int, default=4096)
    args = p.parse_args(argv)
    B, T = args.batch, args.max_len
    device = "cuda" if torch.cuda.is_available() else "cpu"
    gen = torch.Generator().manual_seed(0)

    lengths = torch.randint(1, T + 1, (B,), generator=gen)
    lengths[0] = T                                             # one response fills the window
    pos = torch.arange(T)
    real = pos < lengths[:, None]                              # [B, T] loss mask
    rewards = -0.01 * torch.rand(B, T, generator=gen)          # e.g. a KL penalty per token
    rewards[torch.arange(B), lengths - 1] += torch.randn(B, generator=gen)   # the score
    values = torch.randn(B, T, generator=gen)
    nan = torch.full((B, T), float("nan"))
    rewards, values = torch.where(real, rewards, nan), torch.where(real, values, nan)
    terminated = pos == (lengths[:, None] - 1)                 # the response ends here

    on = [x.to(device) for x in (rewards, values, terminated)]
    adv, ret = rlscan.gae(*on, gamma=1.0, lmbda=0.95)
    adv = adv.cpu()

    worst = 0.0
    for i in range(B):
        n = int(lengths[i])
        alone, _ = rlscan.gae(rewards[i:i + 1, :n], values[i:i + 1, :n],
                              terminated[i:i + 1, :n], gamma=1.0, lmbda=0.95)
        worst = max(worst, float((adv[i, :n] - alone[0]).abs().max()))
    if not worst < 1e-5 or not torch.isfinite(adv[real]).all():
        raise SystemExit(f"padding leaked into real tokens: max |diff| {worst:.3g}")

    masked_mean = (adv.nan_to_num() * real).sum() / real.sum()   # as a trainer masks the loss
    print(f"device {device}: {B} responses of {int(lengths.min())}-{int(lengths.max())} tokens "
          f"(window {T}); every real token's advantage equals its response's alone "
          f"(max |diff| {worst:.1e}); masked mean advantage {float(masked_mean):.4f}")


if __name__ == "__main__":
    main()
