"""The engine: the tiny world, the policy, sampling, verifiers, advantages, losses, the SFT and RL loops,
evaluation and statistics. Nothing here imports any other part of rlbook."""
