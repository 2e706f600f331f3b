import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lmcourse.lineage import EDGES, MODELS, draw_lineage  # noqa: E402


def test_edges_name_known_models_and_point_forward_in_time():
    for parent, child in EDGES:
        assert parent in MODELS and child in MODELS
        assert MODELS[parent][0] < MODELS[child][0], (parent, child)
        assert MODELS[parent][2] <= MODELS[child][2], (parent, child)


def test_draws_every_model():
    ax = draw_lineage()
    texts = " ".join(t.get_text() for t in ax.texts)
    assert all(name in texts for name in MODELS)
    plt.close(ax.figure)
