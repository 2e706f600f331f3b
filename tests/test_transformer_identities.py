"""What chapter 7 demonstrates rather than claims, because it follows from the algebra: an encoder layer
without positions is permutation equivariant, the sinusoids' dot product depends only on the distance,
the FFN's share of a base-model layer, and the causal mask's zero weights on later positions."""
import pytest
import torch

from lmcourse import set_seed
from lmcourse.positional import SinusoidalPositionalEncoding, sinusoidal_encoding
from lmcourse.transformer import DecoderLayer, EncoderLayer, Seq2SeqTransformer, TransformerConfig, count_parameters


@pytest.mark.parametrize("norm_first", [False, True])
def test_an_encoder_layer_without_positions_is_permutation_equivariant(norm_first):
    set_seed(0, num_threads=1)
    layer = EncoderLayer(d_model=16, num_heads=4, d_ff=32, dropout=0.0, norm_first=norm_first).eval()
    x, perm = torch.randn(2, 6, 16), torch.tensor([3, 0, 5, 1, 4, 2])
    with torch.no_grad():
        assert torch.allclose(layer(x[:, perm])[0], layer(x)[0][:, perm], atol=1e-5)
        pe = SinusoidalPositionalEncoding(16, max_len=6)
        assert not torch.allclose(layer(pe(x[:, perm]))[0], layer(pe(x))[0][:, perm], atol=0.1)


def test_the_sinusoids_dot_product_depends_only_on_the_distance():
    pe = sinusoidal_encoding(200, 64).double()
    for k in (0, 1, 5, 37):
        dots = (pe[k:] * pe[:200 - k]).sum(-1)                          # PE[p] . PE[p + k] for every p
        assert torch.allclose(dots, dots[0].expand_as(dots), atol=1e-4)
    near = (pe[50:54] @ pe[50])
    assert (near[1:] < near[:-1]).all()                                 # falling over the first offsets


def test_the_ffn_holds_two_thirds_of_an_encoder_layer_and_half_of_a_decoder_layer():
    encoder, decoder = EncoderLayer(512, 8, 2048), DecoderLayer(512, 8, 2048)
    assert count_parameters(encoder.ff) == 2 * 512 * 2048 + 2048 + 512
    assert 0.66 < count_parameters(encoder.ff) / count_parameters(encoder) < 0.67
    assert 0.49 < count_parameters(decoder.ff) / count_parameters(decoder) < 0.51


def test_the_decoders_self_attention_gives_later_positions_no_weight():
    set_seed(0, num_threads=1)
    config = TransformerConfig(src_vocab_size=9, tgt_vocab_size=9, d_model=16, num_heads=4, d_ff=32, dropout=0.0)
    model = Seq2SeqTransformer(config).eval()
    src, tgt = torch.randint(1, 9, (2, 5)), torch.randint(1, 9, (2, 6))
    with torch.no_grad():
        memory, src_mask, _ = model.encode(src)
        _, self_weights, _ = model.decode(tgt, memory, src_mask, need_weights=True)
    for w in self_weights:                                               # (B, h, T, T) per layer
        assert torch.triu(w, diagonal=1).abs().max() == 0
