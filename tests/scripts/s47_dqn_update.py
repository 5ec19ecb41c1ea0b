"""DQN update step (the PyTorch RL tutorial's optimize_model, with a fixed replay batch):
``gather`` of the taken actions' Q-values, ``max(1)[0]`` over a target network, a
non-final mask, ``smooth_l1_loss``, ``clip_grad_value_`` and a soft target update."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super().__init__()
        self.layer1 = nn.Linear(n_observations, 16)
        self.layer2 = nn.Linear(16, 16)
        self.layer3 = nn.Linear(16, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


def main():
    rng = np.random.default_rng(47)
    policy_net, target_net = DQN(4, 2), DQN(4, 2)
    with torch.no_grad():
        for p in policy_net.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape))))
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-3, amsgrad=True)
    GAMMA, TAU = 0.99, 0.005
    losses = []
    for _ in range(6):
        state_batch = torch.from_numpy(rng.normal(size=(12, 4)))
        action_batch = torch.from_numpy(rng.integers(0, 2, size=(12, 1)))
        reward_batch = torch.from_numpy(rng.uniform(size=12))
        done = rng.uniform(size=12) < 0.25
        non_final_mask = torch.tensor(tuple(not d for d in done), dtype=torch.bool)
        next_states = torch.from_numpy(rng.normal(size=(12, 4)))
        non_final_next_states = next_states[non_final_mask]
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(12)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1)[0]
        expected = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        target_sd, policy_sd = target_net.state_dict(), policy_net.state_dict()
        for key in policy_sd:
            target_sd[key] = policy_sd[key] * TAU + target_sd[key] * (1 - TAU)
        target_net.load_state_dict(target_sd)
        losses.append(loss.item())
    values, indices = policy_net(state_batch).max(dim=1)
    return {
        "losses": losses,
        "target_w": target_net.layer1.weight,
        "values": values,
        "greedy": indices,
        "argmax": policy_net(state_batch).argmax(1),
    }
