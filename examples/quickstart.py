"""A first look at rlscan: GAE and V-trace on a batch of rollouts with episode ends, checked
against the float64 sequential reference. Runs on CPU or, if present, on a CUDA GPU."""
import torch

import rlscan
from rlscan.verify import reference

device = "cuda" if torch.cuda.is_available() else "cpu"
gen = torch.Generator().manual_seed(0)
N, T = 256, 128                                             # 256 environments, 128 steps
rewards = torch.randn(N, T, generator=gen)
values = torch.randn(N, T, generator=gen)
terminated = torch.rand(N, T, generator=gen) < 0.02          # episode really ended
truncated = torch.rand(N, T, generator=gen) < 0.01           # time limit: bootstrap
bootstrap_values = torch.randn(N, T, generator=gen)          # V(final obs), read at truncations and T-1
log_ratio = 0.3 * torch.randn(N, T, generator=gen)

args = [x.to(device) for x in (rewards, values, terminated, truncated)]
adv, ret = rlscan.gae(*args, bootstrap_values=bootstrap_values.to(device), gamma=0.99, lmbda=0.95)
vs, pg = rlscan.vtrace(*args, log_ratio=log_ratio.to(device),
                       bootstrap_values=bootstrap_values.to(device), gamma=0.99)

ref_adv, _ = reference.gae(rewards, values, terminated, truncated,
                           bootstrap_values=bootstrap_values, gamma=0.99, lmbda=0.95)
ref_vs, _ = reference.vtrace(rewards, values, terminated, truncated, log_ratio=log_ratio,
                             bootstrap_values=bootstrap_values, gamma=0.99)
print(f"device: {device}; shapes {tuple(adv.shape)}, {adv.dtype}")
print(f"GAE     max |err| vs float64 reference: {abs(adv.cpu().double().numpy() - ref_adv).max():.2e}")
print(f"V-trace max |err| vs float64 reference: {abs(vs.cpu().double().numpy() - ref_vs).max():.2e}")
