"""GAE for a PPO rollout held the way vectorised-environment trainers hold it: time-major
``[num_steps, num_envs]`` buffers, Gymnasium's ``terminated`` / ``truncated`` flags, and the
critic's value of every step's true next observation (``next_values``; at a truncation that is
the final observation the environment reported before it reset).

It checks rlscan against the per-step Python loop such a trainer would otherwise run, and shows
what the common shortcut, one ``done = terminated | truncated`` flag, gets wrong: it treats a
time-limit truncation as a termination and never bootstraps from the final observation. Runs
on CPU or, if present, on a CUDA GPU.

    python examples/ppo_rollout.py                  # 128 steps x 1024 environments
    python examples/ppo_rollout.py --steps 16 --envs 8
"""
import argparse
import time

import torch

import rlscan


def loop_gae(rewards, values, next_values, terminated, truncated, gamma, lmbda):
    """The textbook backward loop over time, [T, N] tensors, correct at episode ends: a
    terminated step does not bootstrap, a truncated one bootstraps from its final observation,
    and neither carries the advantage of the next (already reset) episode back."""
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    carry = torch.zeros_like(rewards[0])
    for t in reversed(range(T)):
        cont = (~(terminated[t] | truncated[t])).float() if t < T - 1 else torch.zeros_like(carry)
        # selected, not multiplied by a 0/1 mask: 0 * NaN would be NaN
        boot = torch.where(terminated[t], torch.zeros_like(carry), next_values[t])
        delta = rewards[t] + gamma * boot - values[t]
        carry = delta + gamma * lmbda * cont * carry
        adv[t] = carry
    return adv


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=128)
    p.add_argument("--envs", type=int, default=1024)
    args = p.parse_args(argv)
    T, N = args.steps, args.envs
    device = "cuda" if torch.cuda.is_available() else "cpu"
    gen = torch.Generator().manual_seed(0)

    rewards = torch.randn(T, N, generator=gen)
    values = torch.randn(T, N, generator=gen)                 # V(s_t)
    terminated = torch.rand(T, N, generator=gen) < 0.02
    truncated = (torch.rand(T, N, generator=gen) < 0.01) & ~terminated
    # V of each step's true successor: the next row's value inside an episode, the final
    # observation's value at a truncation (what the environment reports before resetting), and
    # anything at a termination (never read: NaN here to prove it)
    next_values = torch.cat([values[1:], torch.randn(1, N, generator=gen)])
    final_obs_values = torch.randn(T, N, generator=gen)
    next_values = torch.where(truncated, final_obs_values, next_values)
    next_values = torch.where(terminated, torch.full_like(next_values, float("nan")), next_values)
    gamma, lmbda = 0.99, 0.95

    on = [x.to(device) for x in (rewards, values, next_values, terminated, truncated)]
    adv, ret = rlscan.gae(on[0], on[1], on[3], on[4], next_values=on[2], gamma=gamma,
                          lmbda=lmbda, time_dim=0)            # [T, N] in, [T, N] out
    start = time.perf_counter()
    adv, ret = rlscan.gae(on[0], on[1], on[3], on[4], next_values=on[2], gamma=gamma,
                          lmbda=lmbda, time_dim=0)
    if device == "cuda":
        torch.cuda.synchronize()
    t_rlscan = time.perf_counter() - start

    start = time.perf_counter()
    want = loop_gae(*on, gamma, lmbda)
    if device == "cuda":
        torch.cuda.synchronize()
    t_loop = time.perf_counter() - start
    err = float((adv - want).abs().max())
    if not err < 1e-4 or not torch.equal(ret, adv + on[1]):
        raise SystemExit(f"rlscan.gae disagrees with the loop: max |diff| {err:.3g}")

    # the shortcut: one `done` flag, so a truncated step is treated as terminal (no bootstrap)
    done = terminated | truncated
    shortcut = loop_gae(rewards, values, next_values, done, torch.zeros_like(done), gamma, lmbda)
    wrong = (shortcut - want.cpu()).abs() > 1e-4
    print(f"device {device}: GAE over {T} steps x {N} envs (time-major), "
          f"max |rlscan - loop| = {err:.2e}; rlscan {t_rlscan * 1e3:.2f} ms, "
          f"Python loop {t_loop * 1e3:.2f} ms")
    print(f"{int(truncated.sum())} truncations: the done-flag shortcut gets {int(wrong.sum())} "
          f"advantages off by more than 1e-4 (each truncated step and the steps before it in its "
          f"episode)")


if __name__ == "__main__":
    main()
