"""The policy-gradient loss's KL term against a hand computation (run: python -m unittest discover -s worker/tests,
in the worker's venv; src/train/worker-losses.worker.test.ts runs it)."""

import math
import unittest

import torch

from reflectkit_worker import losses


def case():
    """One datum of three tokens: position 0 is never trained; two reflection tokens weighted 1/2 each."""
    logp = torch.tensor([[0.0, -1.0, -2.0]], dtype=torch.float64, requires_grad=True)
    old = logp.detach().clone()
    ref = torch.tensor([[0.0, -1.5, -1.0]], dtype=torch.float64)
    weights = torch.tensor([[0.0, 0.5, 0.5]], dtype=torch.float64)
    advantages = torch.tensor([[0.0, 0.3, 0.3]], dtype=torch.float64)
    return logp, old, ref, weights, advantages


class KlTerm(unittest.TestCase):
    def test_k3_value_by_hand(self):
        logp, old, ref, weights, advantages = case()
        _, _, kl = losses.policy_gradient(logp, old, advantages, weights, None, 0.1, ref)
        # k3 = exp(δ) − δ − 1 with δ = log π_ref − log π: δ = −0.5 and +1.0 on the two reflection tokens.
        by_hand = 0.5 * (math.exp(-0.5) + 0.5 - 1) + 0.5 * (math.exp(1.0) - 1.0 - 1)
        self.assertAlmostEqual(float(kl.sum()), by_hand, places=12)
        self.assertAlmostEqual(by_hand, 0.412406, places=6)

    def test_loss_and_gradient_by_hand(self):
        logp, old, ref, weights, advantages = case()
        beta = 0.1
        loss, ratio, _ = losses.policy_gradient(logp, old, advantages, weights, 0.2, beta, ref)
        loss.sum().backward()
        # On-policy the ratio is 1: loss = −Σ A + β Σ w·k3, and d/d log π of w·k3 is w·(1 − exp(δ)).
        self.assertTrue(torch.equal(ratio, torch.ones_like(ratio)))
        self.assertAlmostEqual(float(loss.sum()), -0.6 + beta * 0.412406244, places=8)
        expected = [0.0, -0.3 + beta * 0.5 * (1 - math.exp(-0.5)), -0.3 + beta * 0.5 * (1 - math.exp(1.0))]
        for got, want in zip(logp.grad[0].tolist(), expected):
            self.assertAlmostEqual(got, want, places=12)

    def test_beta_zero_is_the_plain_policy_gradient_bit_for_bit(self):
        grads, values = [], []
        for beta, ref in ((0.0, None), (0.0, case()[2])):
            logp, old, _, weights, advantages = case()
            loss, _, kl = losses.policy_gradient(logp, old, advantages, weights, 0.2, beta, ref)
            loss.sum().backward()
            grads.append(logp.grad.clone())
            values.append(loss.detach().clone())
            self.assertEqual(float(kl.sum()), 0.0)
        self.assertTrue(torch.equal(grads[0], grads[1]))
        self.assertTrue(torch.equal(values[0], values[1]))

    def test_beta_pulls_each_token_towards_the_reference(self):
        # With no advantage, a gradient step on the KL term alone moves log π towards log π_ref on every weighted
        # token (down where the policy is above the reference, up where below), and the KL falls.
        logp, old, ref, weights, _ = case()
        zero = torch.zeros_like(weights)
        loss, _, kl = losses.policy_gradient(logp, old, zero, weights, None, 1.0, ref)
        loss.sum().backward()
        stepped = (logp - 0.1 * logp.grad).detach()
        self.assertLess(float(stepped[0, 1]), -1.0)
        self.assertGreater(float(stepped[0, 2]), -2.0)
        _, _, after = losses.policy_gradient(stepped, old, zero, weights, None, 1.0, ref)
        self.assertLess(float(after.sum()), float(kl.sum()))
        # Unweighted tokens get no gradient from the KL term.
        self.assertEqual(float(logp.grad[0, 0]), 0.0)

    def test_zero_where_the_policy_is_the_reference(self):
        logp, old, _, weights, advantages = case()
        _, _, kl = losses.policy_gradient(logp, old, advantages, weights, None, 0.5, logp.detach().clone())
        self.assertEqual(float(kl.sum()), 0.0)


if __name__ == "__main__":
    unittest.main()
