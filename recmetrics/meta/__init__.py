"""Meta-evaluation: significance tests, discriminative power, robustness, agreement, perturbations."""
