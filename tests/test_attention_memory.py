"""Peak memory of attention, measured in new processes: the explicit path stores (h, T, T) tables,
the fused kernel does not."""
import pytest

from lmcourse.attention_memory import attention_peak_bytes, table_bytes


def test_explicit_path_stores_tables_and_fused_kernel_does_not():
    explicit, fused = attention_peak_bytes([(2048, 2, False), (2048, 2, True)], d_model=32)
    assert 1.5 * table_bytes(2048, 2) < explicit < 3 * table_bytes(2048, 2)
    assert fused < table_bytes(2048, 2) / 5


def test_table_bytes():
    assert table_bytes(4, 2) == 2 * 16 * 4


@pytest.mark.parametrize(("configs", "match"), [([(16, 3, True)], "num_heads"), ([(0, 1, True)], "length"),
                                                ([(16, 1, 1)], "fused"), ([(16, 1)], "triples")])
def test_bad_configs_raise(configs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        attention_peak_bytes(configs, d_model=64)
