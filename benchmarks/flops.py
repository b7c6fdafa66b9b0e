"""Matmul FLOPs of BERT (the formula below), for FLOP/s and model FLOP utilisation.

Per sequence of length S with P masked predictions, training = 3 × forward:
    F_seq = S·(72·L·H² + 12·L·S·H) + 6·P·(H² + H·V)
The 72·L·H² term assumes the 4H feed-forward; `intermediate_size` generalises it.
LayerNorm, GELU, softmax, dropout and embedding gathers are not counted.
"""


def encoder_forward_flops(config, seq_length):
    """Forward matmul FLOPs of the encoder for one sequence."""
    hidden, layers = config.hidden_size, config.num_hidden_layers
    dense_per_token = 2 * (4 * hidden * hidden + 2 * hidden * config.intermediate_size)
    attention_per_token = 4 * seq_length * hidden
    return seq_length * layers * (dense_per_token + attention_per_token)


def masked_lm_forward_flops(config, num_predictions):
    """Forward FLOPs of the masked-LM head (transform + tied decoder) on gathered positions."""
    hidden = config.hidden_size
    return 2 * num_predictions * (hidden * hidden + hidden * config.vocab_size)


def pretraining_flops(config, seq_length, num_predictions):
    """Training FLOPs (forward + backward = 3 × forward) of one pretraining sequence."""
    return 3 * (encoder_forward_flops(config, seq_length)
                + masked_lm_forward_flops(config, num_predictions))
