"""Per-token log-probabilities and the three losses. Every loss is a plain sum over datums and tokens: the caller
normalises through the weights or advantages it sends, so a batch's loss is exactly the sum of its parts and the
same data split 1×8 or 8×1 gives the same gradient."""

import torch
import torch.nn.functional as F


def pad(sequences, value):
    """Right-pads a list of int/float lists into a [B, T] tensor, with the [B, T] mask of real positions."""
    width = max(len(s) for s in sequences)
    out = torch.full((len(sequences), width), value, dtype=torch.float64 if isinstance(value, float) else torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.bool)
    for i, s in enumerate(sequences):
        out[i, : len(s)] = torch.tensor(s, dtype=out.dtype)
        mask[i, : len(s)] = True
    return out, mask


def token_logprobs(model, tokens_B_T, mask_B_T, temperature=1.0):
    """logprobs_B_T[b, t] = log p(tokens[b, t] | tokens[b, :t]); position 0 has no context and is 0. With a
    `temperature` other than 1, p is the temperature-scaled softmax(logits / T) a sampler at T draws from."""
    logits = model(input_ids=tokens_B_T, attention_mask=mask_B_T.long()).logits.float()
    if temperature != 1.0:
        logits = logits / temperature
    logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, tokens_B_T[:, 1:, None]).squeeze(-1)
    return F.pad(logp, (1, 0)) * mask_B_T


def cross_entropy(logp_B_T, weights_B_T):
    """Weighted negative log-likelihood, summed per datum. Textbook SFT averages over loss tokens; here the caller
    puts that average into the weights (1/n on each of n loss tokens)."""
    return -(weights_B_T * logp_B_T).sum(-1)


def policy_gradient(logp_B_T, old_B_T, advantages_B_T, weights_B_T, clip, kl_coef, ref_B_T):
    """Importance-sampled policy gradient, PPO-clipped when `clip` is set, with an optional KL penalty to the
    reference on the weighted tokens. GRPO's per-sequence token mean and group normalisation live in the advantages
    the caller sends (Reflect, Retry, Reward: non-zero only on reflection tokens), so this sums.
    The KL is Schulman's k3 estimator per token, exp(δ) − δ − 1 with δ = log π_ref − log π, as DeepSeek's GRPO and
    TRL use it; unlike GRPO it is weighted by `weights` (the caller's per-sequence token mean) rather than averaged
    here, and it is added to the loss, not to the reward. `kl` comes back per datum, unscaled by `kl_coef`."""
    ratio = torch.exp(logp_B_T - old_B_T)
    surrogate = ratio * advantages_B_T
    if clip is not None:
        surrogate = torch.minimum(surrogate, torch.clamp(ratio, 1 - clip, 1 + clip) * advantages_B_T)
    loss = -surrogate.sum(-1)
    kl = torch.zeros_like(loss)
    if kl_coef:
        delta = ref_B_T - logp_B_T
        kl = ((torch.exp(delta) - delta - 1) * weights_B_T).sum(-1)
        loss = loss + kl_coef * kl
    return loss, ratio, kl


def dpo(chosen_logp, rejected_logp, ref_chosen, ref_rejected, beta):
    """Direct Preference Optimization (Rafailov et al. 2023) on summed log-probabilities of the weighted tokens."""
    margin = beta * ((chosen_logp - ref_chosen) - (rejected_logp - ref_rejected))
    return -F.logsigmoid(margin), margin
